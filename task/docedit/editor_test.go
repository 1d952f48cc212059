package docedit

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestParseOps(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want []op
	}{
		{`In sentence 2, it should say "Tuesday", not "Monday".`, []op{{kind: opReplace, a: "Monday", b: "Tuesday"}}},
		{`In sentence 1, change "big box" to "box".`, []op{{kind: opReplace, a: "big box", b: "box"}}},
		{`Sentence 3: replace "was" with "is".`, []op{{kind: opReplace, a: "was", b: "is"}}},
		{`Please take out the sentence "Sorry for the late notice."`, []op{{kind: opDeleteSentence, a: "Sorry for the late notice."}}},
		{`Swap sentences 2 and 3.`, []op{{kind: opSwap, a: "2", b: "3"}}},
		{`After sentence 2, add a new sentence that starts "We will order".`, []op{{kind: opInsertStart, a: "2", b: "We will order"}}},
		{`At the start, add a new sentence that starts "First, open".`, []op{{kind: opInsertStart, a: "0", b: "First, open"}}},
		{`The new sentence goes on "the box and wait."`, []op{{kind: opInsertRest, a: "the box and wait."}}},
		{`Hmm. Sentence 1: replace "a" with "b". In sentence 2, it should say "c", not "d". Swap sentences 1 and 2.`,
			[]op{{kind: opReplace, a: "a", b: "b"}, {kind: opReplace, a: "d", b: "c"}, {kind: opSwap, a: "1", b: "2"}}},
		{PasteMarker + "\nThe whole\ntext.", []op{{kind: opPaste, a: "The whole text."}}},
		{`The second sentence is off.`, nil},
	} {
		got := parseOps(tc.msg)
		for i := range got {
			got[i].pos = 0
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseOps(%q) = %+v, want %+v", tc.msg, got, tc.want)
		}
	}
}

// Read by the agents' parser, the plan's details turn the draft into the
// target exactly, in any order: what the users say is enough to do the
// edit, and the careful agent reads all of it.
func TestDetailsTurnDraftIntoTarget(t *testing.T) {
	tk := newTestTask(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 300; i++ {
		o, _, err := tk.Instance("train", i)
		if err != nil {
			t.Fatal(err)
		}
		ed := newEditor(o.Draft)
		for _, k := range rng.Perm(len(o.Edits)) {
			for _, p := range parseOps(o.Edits[k].Detail) {
				if !ed.apply(p) {
					t.Fatalf("%s: could not apply %+v from %q", o.ID, p, o.Edits[k].Detail)
				}
			}
		}
		if got := ed.text(); got != o.Truth {
			t.Fatalf("%s: details give %q, want %q (edits %+v)", o.ID, got, o.Truth, o.Edits)
		}
	}
}

func TestTypoSparesQuotesAndKeywords(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	msg := `Okay. In sentence 2, change "Wednesday morning" to "Thursday evening". Thanks again buddy.`
	changed := 0
	for i := 0; i < 200; i++ {
		got := typo(rng, msg)
		if got != msg {
			changed++
		}
		ops := parseOps(got)
		if len(ops) != 1 || ops[0].a != "Wednesday morning" || ops[0].b != "Thursday evening" {
			t.Fatalf("typo %q broke the instruction: %+v", got, ops)
		}
	}
	if changed == 0 {
		t.Error("typo never changed the message")
	}
}

func FuzzParseOps(f *testing.F) {
	for _, s := range []string{
		`In sentence 2, it should say "Tuesday", not "Monday".`, `Swap sentences 9 and 1.`,
		`After sentence 0, add a new sentence that starts "A". The new sentence goes on "b."`,
		PasteMarker + "\nX y.", `Please take out the sentence "One two."`, `"a" to "" with "b"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		ed := newEditor("One two three. Four five six. Seven eight nine.")
		for _, o := range parseOps(msg) {
			ed.apply(o) // must not panic, whatever the numbers and quotes say
		}
		ed.show()
	})
}

func FuzzSplitSentences(f *testing.F) {
	for _, s := range []string{"One. Two! Three? Four", "Mr. Smith came. He left.", " a\n\nb. \"C\" d.", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		sents := SplitSentences(text)
		if got, want := JoinSentences(sents), Normalize(text); got != want {
			t.Fatalf("join of split %q = %q, want %q", text, got, want)
		}
		for _, s := range sents {
			if s == "" {
				t.Fatalf("empty sentence in %q", sents)
			}
		}
	})
}
