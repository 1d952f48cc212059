package persona

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// docedit's document user's ranges, as task/docedit gives them: the one
// Ranges here with a threshold.
var document = Ranges{Patience: Ints{Lo: 4, N: 6}, Verbosity: Uniform{Lo: 0, Width: 1}, TypoRate: Uniform{Lo: 0, Width: 0.15},
	Clarity: Uniform{Lo: 0.6, Width: 0.4}, Threshold: Uniform{Lo: 80, Width: 15}}

// The personas every task's instances hold, pinned: Draw gives, number
// for number, what the tasks' own drawers gave before they shared it
// (mathchat's and support's drawPersona for Human, docedit's for
// document), so their instances, episodes and reports are unchanged. A
// change to the draw order or the arithmetic fails here.
func TestDrawGolden(t *testing.T) {
	golden := map[string][]string{
		"human": {
			"{Patience:6 Verbosity:0.03769138742151068 TypoRate:0.07023272390971987 Clarity:0.622004280741345 Threshold:0}",
			"{Patience:5 Verbosity:0.875828016155711 TypoRate:0.06292126968804757 Clarity:0.743236151166512 Threshold:0}",
			"{Patience:8 Verbosity:0.2763639877622103 TypoRate:0.06802368710257085 Clarity:0.9041979705095216 Threshold:0}",
			"{Patience:8 Verbosity:0.8300141368041755 TypoRate:0.03306964508982647 Clarity:0.8055923011387276 Threshold:0}",
		},
		"document": {
			"{Patience:7 Verbosity:0.03769138742151068 TypoRate:0.07023272390971987 Clarity:0.622004280741345 Threshold:89.8982984430964}",
			"{Patience:6 Verbosity:0.875828016155711 TypoRate:0.06292126968804757 Clarity:0.743236151166512 Threshold:87.18995016454363}",
			"{Patience:9 Verbosity:0.2763639877622103 TypoRate:0.06802368710257085 Clarity:0.9041979705095216 Threshold:84.16241690034842}",
			"{Patience:9 Verbosity:0.8300141368041755 TypoRate:0.03306964508982647 Clarity:0.8055923011387276 Threshold:86.27562532696982}",
		},
	}
	for name, r := range map[string]Ranges{"human": Human, "document": document} {
		for i, seed := range []uint64{1, 2, 3, 1 << 40} {
			if got := fmt.Sprintf("%+v", Draw(rand.New(rand.NewPCG(seed, 7)), r)); got != golden[name][i] {
				t.Errorf("%s, seed %d:\n got %s\nwant %s", name, seed, got, golden[name][i])
			}
		}
	}
}

// A task whose users settle for no score draws four numbers, not five:
// the next draw from the instance's generator is the one it was.
func TestDrawTakesOneNumberPerTrait(t *testing.T) {
	for name, c := range map[string]struct {
		r     Ranges
		draws int
	}{"human": {Human, 4}, "document": {document, 5}} {
		a, b := rand.New(rand.NewPCG(9, 9)), rand.New(rand.NewPCG(9, 9))
		Draw(a, c.r)
		for range c.draws {
			b.Uint64()
		}
		if a.Uint64() != b.Uint64() {
			t.Errorf("%s: Draw took other than %d numbers", name, c.draws)
		}
	}
}
