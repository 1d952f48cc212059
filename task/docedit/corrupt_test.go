package docedit

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/metric"
)

func newTestTask(t testing.TB) *Task {
	t.Helper()
	tk, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// Every corruption kind, applied alone to many generated targets, logs an
// edit that undoes it exactly, in any order with the others.
func TestEveryCorruptionInvertible(t *testing.T) {
	cfg := DefaultConfig()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			done := 0
			for i := 0; i < 200 && done < 40; i++ {
				target, err := generateDoc(KindNames()[i%4], &cfg, rng)
				if err != nil {
					t.Fatal(err)
				}
				b := newBuilder(SplitSentences(target), rng)
				if !b.corrupt(c.name) {
					continue
				}
				// A second, random corruption checks that edits commute.
				b.corrupt(corruptions[rng.IntN(len(corruptions))].name)
				done++
				draft := b.text()
				if err := ValidatePlan(draft, target, b.edits); err != nil {
					t.Fatalf("target %q draft %q edits %+v: %v", target, draft, b.edits, err)
				}
			}
			if done < 20 {
				t.Fatalf("corruption %s applied %d times in 200 documents, want ≥ 20", c.name, done)
			}
		})
	}
}

// Instances' plans turn the draft into the target in every order tried,
// every edit kind shows up, and the drafts' BLEU lies in the tuned band.
func TestInstancesPlanAndBLEUBand(t *testing.T) {
	tk := newTestTask(t)
	cfg := DefaultConfig()
	kinds := map[string]int{}
	var bleus []float64
	nEdits := map[int]int{}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 400; i++ {
		o, v, err := tk.Instance([]string{"train", "test"}[i%2], i/2)
		if err != nil {
			t.Fatal(err)
		}
		if v.Draft != o.Draft {
			t.Fatalf("view draft %q, oracle draft %q", v.Draft, o.Draft)
		}
		if err := ValidatePlan(o.Draft, o.Truth, o.Edits); err != nil {
			t.Fatalf("%s: %v", o.ID, err)
		}
		perm := slices.Clone(o.Edits)
		rng.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
		if got, err := ApplyEdits(o.Draft, perm); err != nil || got != o.Truth {
			t.Fatalf("%s: shuffled plan gives %q (%v), want %q", o.ID, got, err, o.Truth)
		}
		b := metric.SentenceBLEU(o.Draft, o.Truth)
		if b < cfg.MinDraftBLEU || b > cfg.MaxDraftBLEU {
			t.Fatalf("%s: draft BLEU %.1f outside [%g, %g]", o.ID, b, cfg.MinDraftBLEU, cfg.MaxDraftBLEU)
		}
		if n := len(o.Edits); n < cfg.MinEdits || n > cfg.MaxEdits {
			t.Fatalf("%s: %d edits, want %d..%d", o.ID, n, cfg.MinEdits, cfg.MaxEdits)
		}
		bleus = append(bleus, b)
		nEdits[len(o.Edits)]++
		for _, e := range o.Edits {
			kinds[e.Kind]++
			if e.Hint == "" || e.Detail == "" {
				t.Fatalf("%s: edit %+v lacks a hint or detail", o.ID, e)
			}
		}
	}
	for _, k := range []string{KindReplace, KindInsert, KindDelete, KindNumber, KindName, KindDay, KindTense,
		KindRegister, KindInsertSentence, KindDeleteSentence, KindSwap} {
		if kinds[k] == 0 {
			t.Errorf("no %s edit in 400 instances", k)
		}
	}
	sort.Float64s(bleus)
	mean := 0.0
	for _, b := range bleus {
		mean += b
	}
	t.Logf("draft BLEU over %d instances: mean %.1f, min %.1f, p10 %.1f, p50 %.1f, p90 %.1f, max %.1f; edits per draft %v; kinds %v",
		len(bleus), mean/float64(len(bleus)), bleus[0], bleus[len(bleus)/10], bleus[len(bleus)/2], bleus[len(bleus)*9/10], bleus[len(bleus)-1], nEdits, kinds)
}

func TestApplyEditsErrors(t *testing.T) {
	draft := "One two three. Four five six."
	for _, tc := range []struct {
		name string
		e    dialog.Edit
	}{
		{"missing phrase", dialog.Edit{Kind: KindReplace, From: "seven", To: "eight"}},
		{"missing sentence", dialog.Edit{Kind: KindDeleteSentence, From: "Nine ten."}},
		{"missing anchor", dialog.Edit{Kind: KindInsertSentence, From: "Nine ten.", To: "New one."}},
		{"missing swap", dialog.Edit{Kind: KindSwap, From: "One two three.", To: "Nine ten."}},
	} {
		if _, err := ApplyEdits(draft, []dialog.Edit{tc.e}); err == nil {
			t.Errorf("%s: got no error", tc.name)
		}
	}
	got, err := ApplyEdits(draft, []dialog.Edit{
		{Kind: KindSwap, From: "One two three.", To: "Four five six."},
		{Kind: KindInsertSentence, From: "", To: "Zero here."},
		{Kind: KindDelete, From: "two three.", To: "three."},
	})
	if want := "Zero here. Four five six. One three."; err != nil || got != want {
		t.Errorf("got %q (%v), want %q", got, err, want)
	}
}
