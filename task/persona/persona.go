// Package persona draws a simulated user's character (dialog.Persona)
// from the ranges a task gives: one drawer for every task, so the traits
// are drawn in one order and a task changes only where they lie.
package persona

import (
	"math/rand/v2"

	"github.com/calibrl/calibrl/dialog"
)

// Ints is a range of whole numbers: Lo + rand.IntN(N), Lo to Lo+N-1.
type Ints struct{ Lo, N int }

// Uniform is a range of reals: Lo + Width·u, u uniform in [0, 1). Lo and
// Width are kept as given, not as the range's ends, so a draw is the same
// float64 the formula written with the task's constants gives.
type Uniform struct{ Lo, Width float64 }

// Ranges are where a task's users' traits lie (dialog.Persona's fields).
type Ranges struct {
	Patience                     Ints
	Verbosity, TypoRate, Clarity Uniform
	// Threshold is the quality a user settles for; the zero Uniform
	// draws no number, for tasks whose users settle for no score.
	Threshold Uniform
}

// Human is the human proxy's ranges in mathchat and support: patience
// 3–8 unhelpful turns, verbosity in [0,1), typo rate in [0,0.15), clarity
// in [0.6,1).
var Human = Ranges{
	Patience:  Ints{Lo: 3, N: 6},
	Verbosity: Uniform{Lo: 0, Width: 1},
	TypoRate:  Uniform{Lo: 0, Width: 0.15},
	Clarity:   Uniform{Lo: 0.6, Width: 0.4},
}

// Draw draws a persona in r: patience, verbosity, typo rate, clarity and
// (when r has one) threshold, one number each from rng in that order.
// The order is part of every task's instances: changing it changes them.
func Draw(rng *rand.Rand, r Ranges) dialog.Persona {
	p := dialog.Persona{
		Patience:  r.Patience.Lo + rng.IntN(r.Patience.N),
		Verbosity: r.Verbosity.draw(rng),
		TypoRate:  r.TypoRate.draw(rng),
		Clarity:   r.Clarity.draw(rng),
	}
	if r.Threshold != (Uniform{}) {
		p.Threshold = r.Threshold.draw(rng)
	}
	return p
}

func (u Uniform) draw(rng *rand.Rand) float64 { return u.Lo + u.Width*rng.Float64() }
