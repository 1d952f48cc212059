package mathchat

import (
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"strings"
)

// The tutor's book: how the scripted agents work GSM8K-format problems.
//
// The scripted agents stand in for a competent human tutor whose
// conversations are logged; on generated problems they read the text with
// the generator's grammar. GSM8K problems are free text, and reading one
// is the very skill a learned policy is meant to acquire, so a scripted
// agent on GSM8K data is given, through Task.Agent and nothing else, the
// data set's worked solutions with every figure of the problem blanked: a
// tutor's copy of the textbook that has the method but not the numbers.
// From it the agent knows
//
//   - each sentence of the problem as written, numbers blanked
//     ("Janet’s ducks lay _ eggs per day."), so it sees which sentence
//     the user's opening leaves out and can ask about that sentence in
//     its own words ("Janet’s ducks lay how many eggs per day?");
//   - the solution's calculator annotations (<<16-3-4=9>>) as a program
//     whose operands are "the k-th number of sentence i", an earlier
//     step's result, or a constant the solution brings in (the 2 of
//     "half", the 60 of an hour).
//
// Every figure of the problem it computes with comes from the
// conversation: the opening or the user's reply. A misheard or guessed
// number therefore gives a wrong answer, as it would for a person. The
// learned policies never see the book: their dialog.View and their
// conversations are exactly as without it (the chatlm and remote agents
// are built from the View alone).

// blank is the marker a sentence's numbers are replaced with in the book.
const blank = "\x00"

// bookSentence is one sentence of a problem with its numbers blanked.
type bookSentence struct {
	masked string   // normalized text, each number replaced by blank
	kinds  []string // per blank: "how many", "how much" ($) or "what percent"
}

// operand is one input of a step: a number of the problem (sentence,
// index), an earlier step's result (step ≥ 0), or a constant.
type operand struct {
	sent, idx int // a problem number when sent ≥ 0
	step      int // an earlier step when ≥ 0
	val       *big.Rat
}

// bookStep is one binary operation of the worked solution.
type bookStep struct {
	a, b operand
	op   byte // '+', '-', '*', '/'
}

// method is the book's entry for one problem.
type method struct {
	sents []bookSentence
	steps []bookStep // only the steps the answer needs, in order
	// needed[i][k] reports that the answer uses number k of sentence i.
	needed [][]bool
}

// tutorBook indexes the methods by every sentence they contain.
type tutorBook struct {
	bySentence map[string][]*method
}

// newTutorBook builds the book of every problem of a data set whose
// annotations compute its answer; the others stay out, and on them the
// scripted agents behave as on any text they cannot read.
func newTutorBook(set *gsm8kSet) *tutorBook {
	b := &tutorBook{bySentence: map[string][]*method{}}
	for _, split := range []string{"train", "test"} {
		for _, p := range set.splits[split] {
			m, err := buildMethod(p)
			if err != nil {
				continue
			}
			seen := map[string]bool{}
			for _, s := range m.sents {
				if !seen[s.masked] {
					seen[s.masked] = true
					b.bySentence[s.masked] = append(b.bySentence[s.masked], m)
				}
			}
		}
	}
	return b
}

// maskSentence blanks the numbers of a sentence and returns them.
func maskSentence(s string) (bookSentence, []Number) {
	n := normalizeMath(s)
	ns := Numbers(s)
	var b strings.Builder
	var out bookSentence
	at := 0
	for _, x := range ns {
		b.WriteString(n[at:x.Start])
		b.WriteString(blank)
		at = x.End
		switch {
		case x.Percent:
			out.kinds = append(out.kinds, "what percent")
		case strings.Contains(x.Text, "$"):
			out.kinds = append(out.kinds, "how much")
		default:
			out.kinds = append(out.kinds, "how many")
		}
	}
	b.WriteString(n[at:])
	out.masked = b.String()
	return out, ns
}

// ask is the echo question about a sentence's numbers: the sentence with
// each number replaced by its question word.
func (s bookSentence) ask() string {
	q := s.masked
	for _, k := range s.kinds {
		q = strings.Replace(q, blank, k, 1)
	}
	q = strings.TrimRight(strings.TrimSpace(q), ".!?") + "?"
	return strings.ToUpper(q[:1]) + q[1:]
}

// buildMethod turns a GSM8K record into a method, checking that its
// annotations, run on the problem's own numbers, give its answer.
func buildMethod(p GSMProblem) (*method, error) {
	m := &method{}
	var vals [][]*big.Rat // the problem's numbers, for the check only
	type pos struct{ sent, idx int }
	byValue := map[string][]pos{}
	for i, s := range splitSentences(p.Question) {
		bs, ns := maskSentence(s)
		m.sents = append(m.sents, bs)
		row := make([]*big.Rat, len(ns))
		for k, x := range ns {
			row[k] = x.Value
			key := FormatRat(x.Value)
			byValue[key] = append(byValue[key], pos{i, k})
		}
		vals = append(vals, row)
	}
	used := map[pos]bool{}
	results := map[string]int{} // an annotation's written result → its step
	var steps []bookStep
	for _, eq := range equations(p.Worked) {
		lhs, rhs := eq.lhs, eq.rhs
		leaf := func(v *big.Rat) operand {
			key := FormatRat(v)
			if st, ok := results[key]; ok {
				return operand{sent: -1, step: st}
			}
			if ps := byValue[key]; len(ps) > 0 {
				at := ps[0]
				for _, q := range ps {
					if !used[q] {
						at = q
						break
					}
				}
				used[at] = true
				return operand{sent: at.sent, idx: at.idx, step: -1}
			}
			return operand{sent: -1, step: -1, val: v}
		}
		before, usedBefore := len(steps), maps.Clone(used)
		ex := &exprParser{s: strings.ReplaceAll(lhs, " ", ""), leaf: leaf, steps: &steps}
		top, err := ex.parse()
		if err != nil || top.step < 0 {
			// One the parser cannot read ("<<-48+21+(-3)=-30>>") is left
			// out, and the check below decides; a bare number
			// ("<<5=5>>") computes nothing.
			steps, used = steps[:before], usedBefore
			continue
		}
		r, ok := new(big.Rat).SetString(strings.TrimSpace(rhs))
		if !eq.annotated {
			// Prose arithmetic counts only when it is right: "27(1/3)=9"
			// is not 1/3.
			vs, err := run(steps, vals, -1, nil)
			if !ok || err != nil || vs[top.step].Cmp(r) != 0 {
				steps, used = steps[:before], usedBefore
				continue
			}
		}
		if ok {
			results[FormatRat(r)] = top.step
		}
	}
	// The answer is the last step whose value is the truth; only the
	// steps it depends on are kept.
	vs, err := run(steps, vals, -1, nil)
	if err != nil {
		return nil, err
	}
	ans := -1
	for i, v := range vs {
		if v.Cmp(p.Answer) == 0 {
			ans = i
		}
	}
	if ans < 0 {
		return nil, fmt.Errorf("no step computes the answer %s", FormatRat(p.Answer))
	}
	keep := make([]bool, len(steps))
	var mark func(i int)
	mark = func(i int) {
		if keep[i] {
			return
		}
		keep[i] = true
		for _, o := range []operand{steps[i].a, steps[i].b} {
			if o.step >= 0 {
				mark(o.step)
			}
		}
	}
	mark(ans)
	renum := make([]int, len(steps))
	for i, s := range steps[:ans+1] {
		if !keep[i] {
			continue
		}
		renum[i] = len(m.steps)
		for _, o := range []*operand{&s.a, &s.b} {
			if o.step >= 0 {
				o.step = renum[o.step]
			}
		}
		m.steps = append(m.steps, s)
	}
	m.needed = make([][]bool, len(m.sents))
	for i := range m.sents {
		m.needed[i] = make([]bool, len(m.sents[i].kinds))
	}
	for _, s := range m.steps {
		for _, o := range []operand{s.a, s.b} {
			if o.sent >= 0 {
				m.needed[o.sent][o.idx] = true
			}
		}
	}
	return m, nil
}

// run evaluates steps on the problem's numbers vals (nil where unknown,
// which is an error if needed). With slipAt ≥ 0 that step's result is off
// by slipBy and later steps carry it.
func run(steps []bookStep, vals [][]*big.Rat, slipAt int, slipBy *big.Rat) ([]*big.Rat, error) {
	out := make([]*big.Rat, len(steps))
	get := func(o operand) (*big.Rat, error) {
		switch {
		case o.step >= 0:
			return out[o.step], nil
		case o.sent >= 0:
			if v := vals[o.sent][o.idx]; v != nil {
				return v, nil
			}
			return nil, fmt.Errorf("%w: number %d of sentence %d", ErrMissing, o.idx, o.sent)
		}
		return o.val, nil
	}
	for i, s := range steps {
		a, err := get(s.a)
		if err != nil {
			return nil, err
		}
		b, err := get(s.b)
		if err != nil {
			return nil, err
		}
		r := new(big.Rat)
		switch s.op {
		case '+':
			r.Add(a, b)
		case '-':
			r.Sub(a, b)
		case '*':
			r.Mul(a, b)
		case '/':
			if b.Sign() == 0 {
				return nil, errDivZero
			}
			r.Quo(a, b)
		}
		if i == slipAt {
			r.Add(r, slipBy)
		}
		out[i] = r
	}
	return out, nil
}

// equation is one computation of a worked solution: its left side and
// the result written after "=".
type equation struct {
	lhs, rhs  string
	annotated bool // from a calculator annotation, else from the prose
}

// proseEqRe matches arithmetic written in a solution's prose without an
// annotation ("45-5=40", "2 x 8 = $16"): numbers joined by + - * / x ×,
// with parentheses, then "=" and a number.
var proseEqRe = regexp.MustCompile(`(\(?\$?\d[\d,]*(?:\.\d+)?\)?(?:\s*[-+*/x×]\s*\(?\$?\d[\d,]*(?:\.\d+)?\)?)+)\s*=\s*\$?(\d[\d,]*(?:\.\d+)?)`)

// equations lists a worked solution's computations in text order: every
// annotation (<<16-3-4=9>>), and between them the prose arithmetic that
// many solutions leave unannotated, often their last step. The prose
// before an annotation ("16-3-4=<<...") ends in "=" and is not counted
// twice.
func equations(worked string) []equation {
	var out []equation
	prose := func(seg string) {
		for _, m := range proseEqRe.FindAllStringSubmatch(seg, -1) {
			clean := strings.NewReplacer("$", "", ",", "", "x", "*", "×", "*").Replace(m[1])
			out = append(out, equation{lhs: clean, rhs: strings.ReplaceAll(m[2], ",", "")})
		}
	}
	at := 0
	for _, loc := range calcAnnotRe.FindAllStringIndex(worked, -1) {
		prose(worked[at:loc[0]])
		if lhs, rhs, ok := strings.Cut(worked[loc[0]+2:loc[1]-2], "="); ok {
			out = append(out, equation{lhs: lhs, rhs: rhs, annotated: true})
		}
		at = loc[1]
	}
	prose(worked[at:])
	return out
}

// exprParser reads one annotation's left side (numbers, + - * /, and
// parentheses) by precedence, appending a step for each operation in
// the order a person works it.
type exprParser struct {
	s     string
	at    int
	leaf  func(*big.Rat) operand
	steps *[]bookStep
}

func (e *exprParser) parse() (operand, error) {
	o, err := e.sum()
	if err == nil && e.at != len(e.s) {
		err = fmt.Errorf("unexpected %q", e.s[e.at:])
	}
	return o, err
}

func (e *exprParser) binary(next func() (operand, error), ops string) (operand, error) {
	l, err := next()
	for err == nil && e.at < len(e.s) && strings.IndexByte(ops, e.s[e.at]) >= 0 {
		op := e.s[e.at]
		e.at++
		var r operand
		if r, err = next(); err == nil {
			*e.steps = append(*e.steps, bookStep{a: l, b: r, op: op})
			l = operand{sent: -1, step: len(*e.steps) - 1}
		}
	}
	return l, err
}

func (e *exprParser) sum() (operand, error)  { return e.binary(e.term, "+-") }
func (e *exprParser) term() (operand, error) { return e.binary(e.atom, "*/") }

func (e *exprParser) atom() (operand, error) {
	if e.at < len(e.s) && e.s[e.at] == '(' {
		e.at++
		o, err := e.sum()
		if err != nil {
			return o, err
		}
		if e.at >= len(e.s) || e.s[e.at] != ')' {
			return o, fmt.Errorf("unclosed parenthesis")
		}
		e.at++
		return o, nil
	}
	start := e.at
	for e.at < len(e.s) && (e.s[e.at] >= '0' && e.s[e.at] <= '9' || e.s[e.at] == '.') {
		e.at++
	}
	v, ok := new(big.Rat).SetString(e.s[start:e.at])
	if start == e.at || !ok {
		return operand{}, fmt.Errorf("no number at %q", e.s[start:])
	}
	return e.leaf(v), nil
}

// read finds the user's opening in the book: the method of the problem
// most of whose sentences (numbers aside) the opening holds, and the
// numbers the opening gives (nil where it leaves a sentence out). It
// returns nil when no problem of the book shares a sentence with it.
func (b *tutorBook) read(opening string) (*method, [][]*big.Rat) {
	type piece struct {
		masked string
		nums   []Number
	}
	var pieces []piece
	for _, s := range splitSentences(opening) {
		bs, ns := maskSentence(s)
		pieces = append(pieces, piece{bs.masked, ns})
	}
	// Candidates share a whole sentence with the opening; the one that
	// finds most of its sentences there wins.
	var best *method
	var bestVals [][]*big.Rat
	bestFound := 0
	seen := map[*method]bool{}
	for _, pc := range pieces {
		for _, m := range b.bySentence[pc.masked] {
			if seen[m] {
				continue
			}
			seen[m] = true
			vals := make([][]*big.Rat, len(m.sents))
			found := 0
			for i, s := range m.sents {
				for _, q := range pieces {
					at := strings.Index(q.masked, s.masked)
					if at < 0 {
						continue
					}
					skip := strings.Count(q.masked[:at], blank)
					if skip+len(s.kinds) > len(q.nums) {
						continue
					}
					row := make([]*big.Rat, len(s.kinds))
					for k := range row {
						row[k] = q.nums[skip+k].Value
					}
					vals[i] = row
					found++
					break
				}
			}
			if found > bestFound {
				best, bestVals, bestFound = m, vals, found
			}
		}
	}
	if best == nil {
		return nil, nil
	}
	for i, row := range bestVals {
		if row == nil {
			bestVals[i] = make([]*big.Rat, len(best.sents[i].kinds))
		}
	}
	return best, bestVals
}
