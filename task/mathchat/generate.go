package mathchat

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/persona"
)

// gen draws the parts of one problem: distinct names and items, numbers
// in the configured range, rendered statements.
type gen struct {
	rng       *rand.Rand
	cfg       *Config
	l         *language
	usedNames map[string]bool
	usedItems map[string]bool
}

func newGen(rng *rand.Rand, cfg *Config, l *language) *gen {
	return &gen{rng: rng, cfg: cfg, l: l, usedNames: map[string]bool{}, usedItems: map[string]bool{}}
}

func (g *gen) max() int { return g.cfg.MaxNumber }

// name returns a first name not yet used in this problem.
func (g *gen) name() string {
	for {
		n := names[g.rng.IntN(len(names))]
		if !g.usedNames[n] {
			g.usedNames[n] = true
			return n
		}
	}
}

// item returns the plural of an item noun not yet used in this problem.
func (g *gen) item() string {
	for {
		it := items[g.rng.IntN(len(items))].many
		if !g.usedItems[it] {
			g.usedItems[it] = true
			return it
		}
	}
}

func (g *gen) thing() string { return things[g.rng.IntN(len(things))] }

// intn draws an integer in [lo, hi]; an empty range gives lo, which the
// problem checks then reject if it breaks the story.
func (g *gen) intn(lo, hi int) *big.Rat {
	if hi < lo {
		return big.NewRat(int64(lo), 1)
	}
	return big.NewRat(int64(lo+g.rng.IntN(hi-lo+1)), 1)
}

func (g *gen) mul(a *big.Rat, k int64) *big.Rat { return new(big.Rat).Mul(a, big.NewRat(k, 1)) }
func (g *gen) times(a, b *big.Rat) *big.Rat     { return new(big.Rat).Mul(a, b) }

// st renders one statement of pattern id with the word slots given as
// key, value pairs. The full and vague sentences share their choice of
// alternatives ("Then" or "Next,").
func (g *gen) st(id string, val *big.Rat, kv ...string) *stmt {
	p := g.l.byID[id]
	s := &stmt{pat: p, slots: map[string]string{}, val: val}
	for i := 0; i+1 < len(kv); i += 2 {
		s.slots[kv[i]] = kv[i+1]
	}
	seed := g.rng.Uint64()
	s.text = render(p.forms[0], s.slots, val, rand.New(rand.NewPCG(seed, 1)))
	if p.vague != "" {
		s.vague = render(p.vague, s.slots, nil, rand.New(rand.NewPCG(seed, 1)))
	}
	return s
}

// generated is one finished problem with its answer.
type generated struct {
	p      *problem
	answer *big.Rat
	steps  []string
}

// instruction is the full problem text.
func (x *generated) instruction() string {
	var parts []string
	for _, s := range x.p.stmts {
		parts = append(parts, s.text)
	}
	return strings.Join(append(parts, x.p.question.text), " ")
}

// opening is the problem with each hidden statement in its vague form.
func (x *generated) opening() string {
	var parts []string
	for _, s := range x.p.stmts {
		if s.hidden {
			parts = append(parts, s.vague)
		} else {
			parts = append(parts, s.text)
		}
	}
	return strings.Join(append(parts, x.p.question.text), " ")
}

// maxTries bounds the rejection sampling of one problem; with the default
// configuration a family needs a handful of tries on average.
const maxTries = 500

// generate draws one problem: a family, a story that meets the family's
// constraints (whole, non-negative numbers at every step unless fractions
// are on, results within MaxAnswer), distractors, and hidden statements
// whose numbers appear nowhere else in the text.
func generate(l *language, cfg *Config, rng *rand.Rand) (*generated, error) {
	fams := cfg.families()
	// The family is drawn once and kept through the retries, so families
	// that reject more drafts are not drawn less often.
	fam := l.families[fams[rng.IntN(len(fams))]]
	for range maxTries {
		g := newGen(rng, cfg, l)
		p := fam.generate(g)
		p.fam = fam
		c := &calc{slipAt: -1}
		ans := fam.solve(c, p)
		if c.err != nil || c.negative || (c.fractional && !cfg.Fractions) || ans.Sign() <= 0 || tooBig(c, p, cfg.MaxAnswer) {
			continue
		}
		addDistractors(g, p)
		x := &generated{p: p, answer: ans, steps: c.steps}
		if !hide(g, x) {
			continue
		}
		return x, nil
	}
	return nil, fmt.Errorf("mathchat: no valid %s problem in %d tries (max number %d)", fam.name, maxTries, cfg.MaxNumber)
}

// tooBig reports a given number or step result above limit.
func tooBig(c *calc, p *problem, limit int) bool {
	lim := big.NewRat(int64(limit), 1)
	for _, s := range p.stmts {
		if s.val != nil && s.val.Cmp(lim) > 0 {
			return true
		}
	}
	return c.peak != nil && c.peak.Cmp(lim) > 0
}

// addDistractors inserts cfg.Distractors distractor sentences at random
// places after the first statement.
func addDistractors(g *gen, p *problem) {
	for _, i := range g.rng.Perm(len(distractors))[:min(g.cfg.Distractors, len(distractors))] {
		d := g.st(distractors[i].id, g.intn(2, g.max()), "name", g.name())
		at := 1 + g.rng.IntN(len(p.stmts))
		p.stmts = append(p.stmts[:at], append([]*stmt{d}, p.stmts[at:]...)...)
	}
}

// hide marks between MinHidden and MaxHidden needed statements hidden. It
// fails when a hidden number also appears elsewhere in the text, so that a
// reader (and a test) can tell exactly when a hidden number is revealed.
func hide(g *gen, x *generated) bool {
	var needed []*stmt
	for _, s := range x.p.stmts {
		if s.pat.num != numNone && !s.pat.distract {
			needed = append(needed, s)
		}
	}
	k := g.cfg.MinHidden + g.rng.IntN(g.cfg.MaxHidden-g.cfg.MinHidden+1)
	k = min(k, len(needed))
	for _, i := range g.rng.Perm(len(needed))[:k] {
		needed[i].hidden = true
	}
	all := Numbers(x.instruction())
	for _, s := range x.p.stmts {
		if !s.hidden {
			continue
		}
		count := 0
		for _, n := range all {
			if n.Value.Cmp(s.val) == 0 {
				count++
			}
		}
		if count != 1 {
			return false
		}
	}
	return true
}

// oracle builds the oracle context of a generated problem.
func (x *generated) oracle(id, split string, rng *rand.Rand) *dialog.Oracle {
	o := &dialog.Oracle{
		Task:        Name,
		ID:          id,
		Split:       split,
		Family:      x.p.fam.name,
		Instruction: x.instruction(),
		Opening:     x.opening(),
		Truth:       FormatRat(x.answer),
		Solution:    strings.Join(x.steps, ". ") + ". The answer is " + FormatRat(x.answer) + ".",
		Persona:     persona.Draw(rng, persona.Human),
	}
	for _, s := range x.p.stmts {
		if s.pat.num == numNone {
			continue
		}
		o.Facts = append(o.Facts, dialog.Fact{Key: s.key(), Text: s.text, Value: FormatRat(s.val), Cues: s.cues(), Hidden: s.hidden})
	}
	return o
}
