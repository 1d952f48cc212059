package mathchat

import (
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"sync"
)

// stmt is one sentence of a problem, read or generated.
type stmt struct {
	pat   *pattern
	slots map[string]string // word slots; items in plural
	// val is the sentence's number; nil when the sentence withholds it
	// (a vague sentence) or has no number slot.
	val *big.Rat
	// text is the full sentence and vague the sentence with the number
	// withheld (generated problems only).
	text, vague string
	hidden      bool
}

// key names the quantity a statement carries: the pattern and its word
// slots ("shop.each:items=pens").
func (s *stmt) key() string {
	ks := make([]string, 0, len(s.slots))
	for k := range s.slots {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	b.WriteString(s.pat.id)
	for i, k := range ks {
		if i == 0 {
			b.WriteByte(':')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + strings.ToLower(s.slots[k]))
	}
	return b.String()
}

// ask is the careful question about the statement's number.
func (s *stmt) ask() string { return render(s.pat.ask, s.slots, nil, nil) }

// cues are the word stems that mark a question as being about this
// statement: the pattern's cues plus its slot words.
func (s *stmt) cues() []string {
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		for _, x := range wordStems(w) {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	for _, c := range s.pat.cues {
		add(c)
	}
	ks := make([]string, 0, len(s.slots))
	for k := range s.slots {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		add(s.slots[k])
	}
	return out
}

// problem is a word problem as a list of statements and a question.
type problem struct {
	fam      *family
	stmts    []*stmt // in text order, without the question
	question *stmt
	// unmatched are sentences the grammar did not read (chatter around
	// the problem, typos).
	unmatched []string
}

// unknown lists the statements whose number is withheld.
func (p *problem) unknown() []*stmt {
	var out []*stmt
	for _, s := range p.stmts {
		if s.pat.num != numNone && s.val == nil && !s.pat.distract {
			out = append(out, s)
		}
	}
	return out
}

// first returns the first statement of pattern id, or nil.
func (p *problem) first(id string) *stmt {
	for _, s := range p.stmts {
		if s.pat.id == id {
			return s
		}
	}
	return nil
}

// v returns the number of the first statement of pattern id. A missing
// or withheld one sets c.err, so a misread problem fails instead of
// panicking, and yields 1 to keep the arithmetic going.
func (p *problem) v(c *calc, id string) *big.Rat {
	s := p.first(id)
	if s == nil || s.val == nil {
		if c.err == nil {
			c.err = fmt.Errorf("%w: %s", ErrMissing, id)
		}
		return big.NewRat(1, 1)
	}
	return s.val
}

// family is one kind of word problem: its patterns, a generator and the
// solver that both the generator and the scripted agents use.
type family struct {
	name     string
	patterns []*pattern
	// generate draws one candidate problem; the caller checks it and
	// draws again when it is unusable (a non-integer step, a negative
	// count).
	generate func(g *gen) *problem
	// solve computes the answer, recording working in c. Every number it
	// reads is known (the caller checks first).
	solve func(c *calc, p *problem) *big.Rat
}

// Errors from solving a problem text.
var (
	// ErrNoQuestion: no sentence of the text is a question the grammar
	// knows.
	ErrNoQuestion = errors.New("mathchat: no known question in the problem")
	// ErrMissing: some number the answer needs is withheld.
	ErrMissing = errors.New("mathchat: the problem withholds a number it needs")
)

// language is the compiled grammar of every family.
type language struct {
	families map[string]*family
	order    []string // family names in registry order
	patterns []*pattern
	byID     map[string]*pattern
}

var (
	langOnce sync.Once
	lang     *language
	langErr  error
)

// grammar compiles the problem language once.
func grammar() (*language, error) {
	langOnce.Do(func() { lang, langErr = buildLanguage() })
	return lang, langErr
}

func buildLanguage() (*language, error) {
	l := &language{families: map[string]*family{}, byID: map[string]*pattern{}}
	add := func(p *pattern) error {
		if _, dup := l.byID[p.id]; dup {
			return nil // shared patterns are listed by several families
		}
		for _, f := range p.forms {
			c, err := compile(f)
			if err != nil {
				return fmt.Errorf("pattern %s: %w", p.id, err)
			}
			p.compiled = append(p.compiled, c)
		}
		if p.vague != "" {
			c, err := compile(p.vague)
			if err != nil {
				return fmt.Errorf("pattern %s: %w", p.id, err)
			}
			p.compVague = &c
		}
		l.byID[p.id] = p
		l.patterns = append(l.patterns, p)
		return nil
	}
	for _, f := range allFamilies() {
		l.families[f.name] = f
		l.order = append(l.order, f.name)
		for _, p := range f.patterns {
			if err := add(p); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range distractors {
		if err := add(p); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// readSentence matches one sentence against every pattern.
func (l *language) readSentence(s string) (*stmt, bool) {
	for _, p := range l.patterns {
		for i := range p.compiled {
			slots, num, ok := p.compiled[i].match(s)
			if !ok {
				continue
			}
			st := &stmt{pat: p, slots: slots, text: s}
			if p.num != numNone {
				n, ok := ParseNumber(num)
				if !ok {
					continue
				}
				st.val = n.Value
			}
			return st, true
		}
		if p.compVague != nil {
			if slots, _, ok := p.compVague.match(s); ok {
				return &stmt{pat: p, slots: slots, vague: s}, true
			}
		}
	}
	return nil, false
}

// read parses a problem text: every sentence it knows becomes a
// statement; the last question sentence it knows picks the family.
func (l *language) read(text string) *problem {
	p := &problem{}
	for _, s := range splitSentences(text) {
		st, ok := l.readSentence(s)
		switch {
		case !ok:
			p.unmatched = append(p.unmatched, s)
		case st.pat.question:
			p.question = st
			p.fam = l.families[st.pat.family]
		default:
			p.stmts = append(p.stmts, st)
		}
	}
	return p
}

// solve computes a read problem's answer with its working.
func (l *language) solve(p *problem, c *calc) (*big.Rat, error) {
	if p.question == nil || p.fam == nil {
		return nil, ErrNoQuestion
	}
	if u := p.unknown(); len(u) > 0 {
		return nil, fmt.Errorf("%w: %d unknown", ErrMissing, len(u))
	}
	v := p.fam.solve(c, p)
	if c.err != nil {
		return nil, c.err
	}
	return v, nil
}

// Solve reads a problem written in the generator's language and returns
// its exact answer and worked steps. It fails with ErrNoQuestion when it
// finds no question it knows and with ErrMissing when a number the answer
// needs is withheld ("Tom has some apples.").
func Solve(text string) (*big.Rat, []string, error) {
	l, err := grammar()
	if err != nil {
		return nil, nil, err
	}
	c := &calc{slipAt: -1}
	v, err := l.solve(l.read(text), c)
	if err != nil {
		return nil, nil, err
	}
	return v, c.steps, nil
}
