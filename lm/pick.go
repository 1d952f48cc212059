package lm

// Choosing the next token from the logits: temperature, nucleus (top-p),
// an allowed set, and the draw.

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

func checkAllowed(allow []int, V int) error {
	if len(allow) == 0 {
		return errors.New("Allow returned no token")
	}
	for _, id := range allow {
		if id < 0 || id >= V {
			return fmt.Errorf("Allow returned token %d outside vocab [0,%d)", id, V)
		}
	}
	return nil
}

// pickToken draws the next token from one row of logits [V] and returns it
// with its untempered log-probability. order and buf are [V] scratch.
// allow, when not nil, holds the only ids that may be drawn.
func pickToken(logits []float32, sc SampleConfig, rng *rand.Rand, order []int, buf []float32, allow []int) (int, float32) {
	V := len(logits)
	mx := logits[0]
	arg := 0
	for j, v := range logits {
		if v > mx {
			mx, arg = v, j
		}
	}
	probs := buf[:V]
	copy(probs, logits)
	lse := mx + logf(expShiftSum(probs, mx))
	if allow != nil {
		tok := pickAllowed(logits, sc, rng, order, probs, allow)
		return tok, logits[tok] - lse
	}
	if sc.Temperature == 0 {
		return arg, logits[arg] - lse
	}
	if sc.Temperature != 1 {
		inv := float32(1 / sc.Temperature)
		for j, v := range logits {
			probs[j] = v * inv
		}
		expShiftSum(probs, mx*inv)
	}
	order = order[:V]
	for j := range order {
		order[j] = j
	}
	if sc.TopP < 1 {
		// Highest probability first, lower id first on ties; keep the
		// shortest prefix holding TopP of the mass.
		slices.SortFunc(order, func(a, b int) int {
			if probs[a] != probs[b] {
				if probs[a] > probs[b] {
					return -1
				}
				return 1
			}
			return a - b
		})
		var z float64
		for _, p := range probs {
			z += float64(p)
		}
		order = nucleus(order, probs, sc.TopP*z)
	}
	tok := draw(order, probs, rng)
	return tok, logits[tok] - lse
}

// pickAllowed is pickToken's draw restricted to the ids in allow: the
// greedy choice is the allowed id with the highest logit (the lowest on
// ties); otherwise the tempered probabilities of the allowed ids, cut to
// top-p among them, are renormalised.
func pickAllowed(logits []float32, sc SampleConfig, rng *rand.Rand, order []int, probs []float32, allow []int) int {
	order = append(order[:0], allow...)
	slices.Sort(order)
	order = slices.Compact(order)
	best := order[0]
	for _, j := range order {
		if logits[j] > logits[best] {
			best = j
		}
	}
	if sc.Temperature == 0 || len(order) == 1 {
		return best
	}
	inv := 1 / sc.Temperature
	for _, j := range order {
		probs[j] = float32(math.Exp((float64(logits[j]) - float64(logits[best])) * inv))
	}
	if sc.TopP < 1 {
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case probs[a] > probs[b]:
				return -1
			case probs[a] < probs[b]:
				return 1
			}
			return 0
		})
		var z float64
		for _, j := range order {
			z += float64(probs[j])
		}
		order = nucleus(order, probs, sc.TopP*z)
	}
	return draw(order, probs, rng)
}

// nucleus keeps the shortest prefix of order (most likely first) whose
// probabilities reach mass.
func nucleus(order []int, probs []float32, mass float64) []int {
	var cum float64
	for k, j := range order {
		cum += float64(probs[j])
		if cum >= mass {
			return order[:k+1]
		}
	}
	return order
}

// draw picks one of order in proportion to its unnormalised probs.
func draw(order []int, probs []float32, rng *rand.Rand) int {
	var mass float64
	for _, j := range order {
		mass += float64(probs[j])
	}
	u := rng.Float64() * mass
	var cum float64
	for _, j := range order {
		cum += float64(probs[j])
		if u < cum {
			return j
		}
	}
	return order[len(order)-1]
}
