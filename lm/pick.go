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
	if sc.TopP < 1 {
		var z float64
		for _, p := range probs {
			z += float64(p)
		}
		order = nucleusOf(order[:0], probs, nil, sc.TopP*z)
	} else {
		order = order[:V]
		for j := range order {
			order[j] = j
		}
	}
	tok := draw(order, probs, rng)
	return tok, logits[tok] - lse
}

// pickAllowed is pickToken's draw restricted to the ids in allow: the
// greedy choice is the allowed id with the highest logit (the lowest on
// ties); otherwise the tempered probabilities of the allowed ids, cut to
// top-p among them, are renormalised. order is scratch of 2V ids (V: the
// allowed ones, V: their nucleus; shorter scratch is grown).
func pickAllowed(logits []float32, sc SampleConfig, rng *rand.Rand, order []int, probs []float32, allow []int) int {
	V := len(logits)
	ids := append(order[:0:min(V, len(order))], allow...)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	best := ids[0]
	for _, j := range ids {
		if logits[j] > logits[best] {
			best = j
		}
	}
	if sc.Temperature == 0 || len(ids) == 1 {
		return best
	}
	inv := 1 / sc.Temperature
	for _, j := range ids {
		probs[j] = float32(math.Exp((float64(logits[j]) - float64(logits[best])) * inv))
	}
	if sc.TopP < 1 {
		ids = allowedNucleus(order[min(V, len(order)):][:0], ids, probs, sc.TopP)
	}
	return draw(ids, probs, rng)
}

// allowedNucleus is the top-p nucleus of ids with its mass z summed most
// likely first, the order the nucleus is cut in. That order needs every
// id sorted, so z is summed in id order instead, and the cut kept where
// the two sums cannot decide it differently: they differ by at most
// 2(n−1)·2⁻⁵³·z for n ids, inside the margin asked of the cut's two
// neighbouring sums (10⁻⁹·z, and more for a vocabulary past 10⁶ ids). Otherwise (once in a great while) every id
// is sorted and z summed in that order.
func allowedNucleus(out, ids []int, probs []float32, topP float64) []int {
	var z float64
	for _, j := range ids {
		z += float64(probs[j])
	}
	mass := topP * z
	margin := 1e-9 + 4*float64(len(ids))*0x1p-53
	if nuc := nucleusOf(out, probs, ids, mass); len(nuc) < len(ids) {
		var below float64 // the mass before the nucleus's last id
		for _, j := range nuc[:len(nuc)-1] {
			below += float64(probs[j])
		}
		at := below + float64(probs[nuc[len(nuc)-1]])
		if at >= mass*(1+margin) && below < mass*(1-margin) {
			return nuc
		}
	}
	slices.SortFunc(ids, byProb(probs))
	z = 0
	for _, j := range ids {
		z += float64(probs[j])
	}
	return nucleus(ids, probs, topP*z)
}

// byProb orders ids most likely first, the lower id first on ties: the
// order a nucleus is cut in.
func byProb(probs []float32) func(a, b int) int {
	return func(a, b int) int {
		switch {
		case probs[a] > probs[b]:
			return -1
		case probs[a] < probs[b]:
			return 1
		}
		return a - b
	}
}

// nucleusOf returns the shortest run of ids (nil: every id of probs) in
// byProb's order whose probabilities, summed in that order, reach mass,
// or all of them in that order when they never do: what sorting every id
// and cutting (nucleus) gives. It sorts only the ids above a threshold,
// lowered until they reach mass. Those ids are the sorted order's first
// ones, so their sums are the same: the sampler cuts top-p 0.9 from 512
// ids at every simulator token, and sorting all of them took 12% of the
// CPU of three calibrated GRPO iterations.
func nucleusOf(out []int, probs []float32, ids []int, mass float64) []int {
	n := len(probs)
	if ids != nil {
		n = len(ids)
	}
	id := func(i int) int {
		if ids == nil {
			return i
		}
		return ids[i]
	}
	var top float32
	for i := range n {
		top = max(top, probs[id(i)])
	}
	for _, t := range [...]float32{top / 64, top / (1 << 16), 0} {
		out = out[:0]
		for i := range n {
			if j := id(i); probs[j] >= t || t == 0 {
				out = append(out, j)
			}
		}
		slices.SortFunc(out, byProb(probs))
		var cum float64
		for k, j := range out {
			cum += float64(probs[j])
			if cum >= mass {
				return out[:k+1]
			}
		}
		if len(out) == n {
			break
		}
	}
	return out
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
