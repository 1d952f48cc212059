package mathchat

import (
	"errors"
	"math/big"
	"strings"
	"unicode"
)

// calc does a solver's exact arithmetic and writes its working as short
// lines ("4 × 3 = 12"). It can be told to slip on one step (the sloppy
// agent), and it notes steps a problem generator must avoid.
type calc struct {
	steps []string
	// slipAt is the step whose result is off by slipBy; -1 for none. The
	// wrong value flows into every later step, as a person's slip would.
	slipAt int
	slipBy *big.Rat
	// negative and fractional report a negative or non-integer result at
	// some step.
	negative, fractional bool
	// peak is the largest result's size.
	peak *big.Rat
	err  error
}

var errDivZero = errors.New("mathchat: division by zero")

func (c *calc) record(a *big.Rat, sym string, b, r *big.Rat) *big.Rat {
	if len(c.steps) == c.slipAt && c.slipBy != nil {
		r.Add(r, c.slipBy)
	}
	c.steps = append(c.steps, FormatRat(a)+" "+sym+" "+FormatRat(b)+" = "+FormatRat(r))
	c.note(r)
	return r
}

func (c *calc) note(r *big.Rat) {
	if r.Sign() < 0 {
		c.negative = true
	}
	if !r.IsInt() {
		c.fractional = true
	}
	if a := new(big.Rat).Abs(r); c.peak == nil || a.Cmp(c.peak) > 0 {
		c.peak = a
	}
}

func (c *calc) add(a, b *big.Rat) *big.Rat { return c.record(a, "+", b, new(big.Rat).Add(a, b)) }
func (c *calc) sub(a, b *big.Rat) *big.Rat { return c.record(a, "-", b, new(big.Rat).Sub(a, b)) }
func (c *calc) mul(a, b *big.Rat) *big.Rat { return c.record(a, "×", b, new(big.Rat).Mul(a, b)) }

func (c *calc) div(a, b *big.Rat) *big.Rat {
	if b.Sign() == 0 {
		c.err = errDivZero
		return new(big.Rat)
	}
	return c.record(a, "÷", b, new(big.Rat).Quo(a, b))
}

// percentOf takes pct percent of a and writes "75% of 80 = 60", which
// keeps the working's numbers as small as the problem's.
func (c *calc) percentOf(pct, a *big.Rat) *big.Rat {
	r := new(big.Rat).Mul(a, pct)
	r.Quo(r, big.NewRat(100, 1))
	if len(c.steps) == c.slipAt && c.slipBy != nil {
		r.Add(r, c.slipBy)
	}
	c.steps = append(c.steps, FormatRat(pct)+"% of "+FormatRat(a)+" = "+FormatRat(r))
	c.note(r)
	return r
}

// divmod divides whole numbers with a remainder and writes
// "23 ÷ 5 = 4 remainder 3". Non-integers are truncated first, which only
// a guessing agent can cause.
func (c *calc) divmod(a, b *big.Rat) (q, r *big.Rat) {
	ai := new(big.Int).Quo(a.Num(), a.Denom())
	bi := new(big.Int).Quo(b.Num(), b.Denom())
	if bi.Sign() == 0 {
		c.err = errDivZero
		return new(big.Rat), new(big.Rat)
	}
	qi, ri := new(big.Int).QuoRem(ai, bi, new(big.Int))
	q, r = new(big.Rat).SetInt(qi), new(big.Rat).SetInt(ri)
	if len(c.steps) == c.slipAt && c.slipBy != nil {
		// A slip on a division spoils both parts of the result.
		q.Add(q, c.slipBy)
		r.Add(r, c.slipBy)
	}
	c.steps = append(c.steps, ai.String()+" ÷ "+bi.String()+" = "+FormatRat(q)+" remainder "+FormatRat(r))
	c.note(q)
	c.note(r)
	return q, r
}

// wordStems lowers s, splits it into letter runs and stems each: a
// trailing "s" goes (not from "ss" or words of three letters or fewer).
// One-letter runs ("s" of "Ann's") are dropped.
func wordStems(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) < 2 {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

func stem(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		return w[:len(w)-1]
	}
	return w
}
