package mathchat

import (
	"math/big"
	"regexp"
	"strings"
)

// Calculator is the task's arithmetic tool, after GSM8K's own: its
// solutions annotate each step as <<48/2=24>> and its authors let a
// calculator fill the result in while the model samples. Here the
// notation is the one every scripted agent already writes its working in,
// "7 × 4 = 28", "75% of 80 = 60", "23 ÷ 5 = 4 remainder 3": when an
// agent's turn so far ends in a binary step and "=", the environment
// writes the exact result (the task's own big.Rat arithmetic), and the
// agent carries on from there. So the agent decides what to compute —
// which numbers, which operation, when — and the tool only does the sum:
// at the embedded scale RL then learns the dialogue, not long division.
//
// A step is one operation between two numbers, as the scripted agents
// write it; a longer chain ("2 + 3 + 4 =") or an operand glued to an
// earlier operator gets no result, so a policy gains nothing from writing
// outside the notation. Numbers are whole or decimal, without thousands
// separators.
//
// Division of whole numbers that does not come out even is written with a
// remainder (the remainder family's notation) unless Fractions is set,
// where it is the exact quotient (FormatRat).
type Calculator struct {
	Fractions bool
}

// calcNum is one operand: a whole or decimal number.
const calcNum = `(\d+(?:\.\d+)?)`

var (
	// binaryStep matches "A op B =" at the end of a turn; the character
	// before A, if any, must not belong to an expression.
	binaryStep = regexp.MustCompile(`(?:^|[^\d%+\-×÷*/ ]) *` + calcNum + ` *([+\-×÷]) *` + calcNum + ` *=$`)
	// percentStep matches "P% of A =".
	percentStep = regexp.MustCompile(`(?:^|[^\d%+\-×÷*/ ]) *` + calcNum + ` *% of *` + calcNum + ` *=$`)
	// writtenStep matches a whole step with the result its writer gave,
	// for Apply.
	writtenStep = regexp.MustCompile(`(?:` + calcNum + ` *([+\-×÷]) *|` + calcNum + ` *% of *)` + calcNum + ` *=( -?\d+(?:\.\d+)?(?:/\d+)?(?: remainder -?\d+)?)`)
)

// Complete returns the text the tool writes after text, a turn written so
// far, or "" when text does not end in a step. The result starts with a
// space: "3 + 4 =" is completed by " 7".
func (c Calculator) Complete(text string) string {
	if !strings.HasSuffix(text, "=") {
		return "" // the common case, answered without a regexp
	}
	if m := binaryStep.FindStringSubmatch(text); m != nil {
		return c.result(m[1], m[2], m[3])
	}
	if m := percentStep.FindStringSubmatch(text); m != nil {
		return c.result(m[1], "%", m[2])
	}
	return ""
}

// result computes "a op b" and writes it, or "" when it has no value
// (division by zero).
func (c Calculator) result(as, op, bs string) string {
	a, okA := new(big.Rat).SetString(as)
	b, okB := new(big.Rat).SetString(bs)
	if !okA || !okB {
		return ""
	}
	r := new(big.Rat)
	switch op {
	case "+":
		r.Add(a, b)
	case "-":
		r.Sub(a, b)
	case "×":
		r.Mul(a, b)
	case "%":
		r.Mul(a, b).Quo(r, big.NewRat(100, 1))
	case "÷":
		if b.Sign() == 0 {
			return ""
		}
		r.Quo(a, b)
		if !r.IsInt() && !c.Fractions && a.IsInt() && b.IsInt() {
			q, rem := new(big.Int).QuoRem(a.Num(), b.Num(), new(big.Int))
			return " " + q.String() + " remainder " + rem.String()
		}
	default:
		return ""
	}
	return " " + FormatRat(r)
}

// Apply rewrites every step of a finished turn with the tool's result, as
// if the tool had been used while it was written: how the scripted
// agents' turns are made when the calculator is on. A scripted slip in a
// result is overwritten, while the slipped value the writer carries into
// later steps stays, so a sloppy agent with a calculator slips by
// misreading a number instead of by a wrong sum. Text without steps comes
// back unchanged.
func (c Calculator) Apply(text string) string {
	var b strings.Builder
	for {
		loc := writtenStep.FindStringSubmatchIndex(text)
		if loc == nil {
			b.WriteString(text)
			return b.String()
		}
		resStart, resEnd := loc[10], loc[11] // the written result, with its space
		head := text[:resStart]              // ends in "="
		ins := c.Complete(b.String() + head)
		// "66 ÷ 6 = 11 remainder 0" (the remainder family's notation for
		// an even division) agrees with the tool's " 11": the tool writes
		// the quotient and the writer adds the remainder, as a model does.
		if written := text[resStart:resEnd]; ins == "" || written == ins+" remainder 0" {
			b.WriteString(text[:resEnd])
		} else {
			b.WriteString(head)
			b.WriteString(ins)
		}
		text = text[resEnd:]
	}
}
