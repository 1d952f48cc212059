package lm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pickSorted is the draw as it was before nucleusOf: every id sorted,
// most likely first (ties: lower id first; the allowed ids by a stable
// sort of their id order), the nucleus cut from that order, the allowed
// ids' mass summed in it. The sampler must draw exactly what it drew.
func pickSorted(logits []float32, sc SampleConfig, rng *rand.Rand, allow []int) int {
	V := len(logits)
	mx, arg := logits[0], 0
	for j, v := range logits {
		if v > mx {
			mx, arg = v, j
		}
	}
	probs := slices.Clone(logits)
	expShiftSum(probs, mx)
	if allow != nil {
		order := slices.Compact(slices.Sorted(slices.Values(allow)))
		best := order[0]
		for _, j := range order {
			if logits[j] > logits[best] {
				best = j
			}
		}
		if sc.Temperature == 0 || len(order) == 1 {
			return best
		}
		for _, j := range order {
			probs[j] = float32(math.Exp((float64(logits[j]) - float64(logits[best])) / sc.Temperature))
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
	if sc.Temperature == 0 {
		return arg
	}
	if sc.Temperature != 1 {
		inv := float32(1 / sc.Temperature)
		for j, v := range logits {
			probs[j] = v * inv
		}
		expShiftSum(probs, mx*inv)
	}
	order := make([]int, V)
	for j := range order {
		order[j] = j
	}
	if sc.TopP < 1 {
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
	return draw(order, probs, rng)
}

// The sampler draws, token for token, what sorting every id drew: peaked
// and flat logits, ties, temperatures, top-p values, allowed sets with
// repeats, and masses that fall exactly on a cut (equal probabilities), where
// the allowed ids' nucleus must take the sorted path.
func TestPickMatchesSortingEveryID(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const V = 512
	order, buf := make([]int, 2*V), make([]float32, V)
	short := make([]int, V) // scratch of V ids only: grown where needed
	for c := range 3000 {
		logits := make([]float32, V)
		scale := []float64{0.1, 1, 3, 8}[c%4]
		for j := range logits {
			logits[j] = float32(r.NormFloat64() * scale)
		}
		if c%5 == 0 { // ties: a few levels only
			for j := range logits {
				logits[j] = float32(r.IntN(4))
			}
		}
		sc := SampleConfig{Temperature: []float64{1, 0.7, 1.3, 0}[c/4%4], TopP: []float64{0.9, 0.5, 0.99, 1, 0.25}[c%5]}
		var allow []int
		if c%3 != 0 {
			for range 1 + r.IntN(V) {
				allow = append(allow, r.IntN(V))
			}
		}
		seed := uint64(c)
		want := pickSorted(logits, sc, rand.New(rand.NewPCG(seed, 1)), allow)
		scratch := order
		if c%7 == 0 {
			scratch = short
		}
		got, _ := pickToken(logits, sc, rand.New(rand.NewPCG(seed, 1)), scratch, buf, allow)
		if got != want {
			t.Fatalf("case %d (%+v, %d allowed): drew %d, sorting every id drew %d", c, sc, len(allow), got, want)
		}
	}
}

// The allowed ids' nucleus takes its fast cut only when the mass summed in
// id order cannot decide it otherwise than the mass summed most likely
// first; a cut that lands exactly on the mass goes the sorted way, and
// both give the sorted order's prefix.
func TestAllowedNucleus(t *testing.T) {
	probs := []float32{0.25, 0.25, 0.25, 0.25, 0}
	ids := []int{0, 1, 2, 3, 4}
	got := allowedNucleus(nil, slices.Clone(ids), probs, 0.5) // cum 0.5 = mass exactly
	if !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("nucleus %v, want [0 1]", got)
	}
	probs = []float32{0.1, 0.6, 0.05, 0.25}
	got = allowedNucleus(nil, []int{0, 1, 2, 3}, probs, 0.8)
	if !slices.Equal(got, []int{1, 3}) {
		t.Fatalf("nucleus %v, want [1 3]", got)
	}
	if got := nucleusOf(nil, probs, nil, 2); !slices.Equal(got, []int{1, 3, 0, 2}) {
		t.Fatalf("unreached mass: %v, want every id sorted", got)
	}
}

// BenchmarkPickTopP times one simulator draw (top-p 0.9 from 512 ids,
// all of them or 480 allowed) against sorting every id, on logits as
// spread as a trained model's (σ 3) and flatter (σ 1).
func BenchmarkPickTopP(b *testing.B) {
	r := rand.New(rand.NewPCG(23, 24))
	const V = 512
	sc := SampleConfig{Temperature: 1, TopP: 0.9}
	order, buf := make([]int, 2*V), make([]float32, V)
	allow := r.Perm(V)[:480]
	for _, sigma := range []float64{3, 1} {
		logits := make([]float32, V)
		for j := range logits {
			logits[j] = float32(r.NormFloat64() * sigma)
		}
		for _, al := range []struct {
			name string
			ids  []int
		}{{"all", nil}, {"allowed", allow}} {
			rng := rand.New(rand.NewPCG(1, 2))
			b.Run(fmt.Sprintf("sigma%g/%s/sorted", sigma, al.name), func(b *testing.B) {
				for b.Loop() {
					pickSorted(logits, sc, rng, al.ids)
				}
			})
			b.Run(fmt.Sprintf("sigma%g/%s/nucleus", sigma, al.name), func(b *testing.B) {
				for b.Loop() {
					pickToken(logits, sc, rng, order, buf, al.ids)
				}
			})
		}
	}
}
