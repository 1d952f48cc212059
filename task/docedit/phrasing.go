package docedit

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// How the users describe edits. Hints are vague ("the second sentence is
// off"); details are concrete and follow fixed templates that the scripted
// agents (and small language models imitating them) can read:
//
//	In sentence N, it should say "TO", not "FROM".
//	In sentence N, change "FROM" to "TO".
//	Sentence N: replace "FROM" with "TO".
//	Please take out the sentence "SENTENCE".
//	After sentence N, add a new sentence that starts "FIRST HALF".
//	At the start, add a new sentence that starts "FIRST HALF".
//	The new sentence goes on "SECOND HALF".
//	Swap sentences N and M.
//
// Sentence numbers count from 1 in the document the user is looking at
// (the current document: the draft as the agent's turns changed it;
// agents' edit commands number sentences the same way). A missing
// sentence is given in two halves, in two messages, so that the human
// proxy never states a target sentence the draft lacks in one message.

var ordinals = []string{"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"}

func ordinal(i int) string { // i is 0-based
	if i >= 0 && i < len(ordinals) {
		return ordinals[i]
	}
	return fmt.Sprintf("number %d", i+1)
}

// editState is an edit's state in a document.
type editState int

const (
	stateOutstanding editState = iota // still to do
	stateDone                         // done
	stateBroken                       // neither: the place was changed some other way
)

func stateOf(e dialog.Edit, cur []string) editState {
	text := JoinSentences(cur)
	switch e.Kind {
	case KindDeleteSentence:
		if countPhrase(text, e.From) > 0 {
			return stateOutstanding
		}
		return stateDone
	case KindInsertSentence:
		if slices.Contains(cur, e.To) {
			return stateDone
		}
		return stateOutstanding
	case KindSwap:
		i, j := indexOf(cur, e.From), indexOf(cur, e.To)
		switch {
		case i < 0 || j < 0:
			return stateBroken
		case j < i:
			return stateDone
		}
		return stateOutstanding
	}
	switch {
	case countPhrase(text, e.From) > 0:
		return stateOutstanding
	case countPhrase(text, e.To) > 0:
		return stateDone
	}
	return stateBroken
}

// where returns the 0-based sentences of cur an edit is about: the
// sentence holding the phrase, the sentence to delete, the sentence to
// insert after (-1: at the start), or the two sentences to swap.
func where(e dialog.Edit, cur []string) (int, int) {
	clamp := func(i int) int { return max(0, min(i, len(cur)-1)) }
	switch e.Kind {
	case KindDeleteSentence:
		if i := indexOf(cur, e.From); i >= 0 {
			return i, -1
		}
	case KindInsertSentence:
		if e.From == "" {
			return -1, -1
		}
		if i := indexOf(cur, e.From); i >= 0 {
			return i, -1
		}
		return clamp(e.Sentence - 1), -1
	case KindSwap:
		i, j := indexOf(cur, e.From), indexOf(cur, e.To)
		if i >= 0 && j >= 0 {
			return min(i, j), max(i, j)
		}
	default:
		for i, s := range cur {
			if findPhrase(s, e.From) >= 0 {
				return i, -1
			}
		}
	}
	return clamp(e.Sentence), clamp(e.Sentence + 1)
}

func pick(rng *rand.Rand, xs []string) string { return xs[rng.IntN(len(xs))] }

var hintTemplates = map[string][]string{
	KindReplace:        {"Something in the %s sentence isn't right.", "The %s sentence is off."},
	KindInsert:         {"Something is missing in the %s sentence.", "The %s sentence is missing a word or two."},
	KindDelete:         {"There is a bit too much in the %s sentence.", "The %s sentence has an extra word in it."},
	KindNumber:         {"The number in the %s sentence is wrong.", "One of the numbers is off, in the %s sentence."},
	KindName:           {"The name in the %s sentence is wrong.", "Wrong person in the %s sentence."},
	KindDay:            {"The day in the %s sentence is wrong.", "The %s sentence has the wrong day."},
	KindTense:          {"The tense in the %s sentence is wrong.", "The %s sentence is in the wrong tense."},
	KindRegister:       {"The wording of the %s sentence doesn't sound like me.", "The %s sentence has the wrong tone."},
	KindDeleteSentence: {"The %s sentence shouldn't be there.", "I don't want the %s sentence at all."},
}

// hint describes an edit vaguely, relative to cur.
func hint(e dialog.Edit, cur []string, rng *rand.Rand) string {
	i, j := where(e, cur)
	switch e.Kind {
	case KindInsertSentence:
		if i < 0 {
			return "Something is missing at the beginning."
		}
		return fmt.Sprintf(pick(rng, []string{"Something is missing after the %s sentence.", "There should be another sentence after the %s one."}), ordinal(i))
	case KindSwap:
		return fmt.Sprintf("The %s and %s sentences are in the wrong order.", ordinal(i), ordinal(j))
	}
	tpls, ok := hintTemplates[e.Kind]
	if !ok {
		tpls = hintTemplates[KindReplace]
	}
	return fmt.Sprintf(pick(rng, tpls), ordinal(i))
}

// phraseDetail states a word-level change concretely.
func phraseDetail(sentence int, from, to string, rng *rand.Rand) string {
	switch rng.IntN(3) {
	case 0:
		return fmt.Sprintf("In sentence %d, it should say \"%s\", not \"%s\".", sentence+1, to, from)
	case 1:
		return fmt.Sprintf("In sentence %d, change \"%s\" to \"%s\".", sentence+1, from, to)
	}
	return fmt.Sprintf("Sentence %d: replace \"%s\" with \"%s\".", sentence+1, from, to)
}

// halves splits a sentence into the two parts a missing sentence is
// dictated in.
func halves(s string) (string, string) {
	w := strings.Fields(s)
	k := max(1, len(w)/2)
	return strings.Join(w[:k], " "), strings.Join(w[k:], " ")
}

// detail describes an edit concretely, relative to cur. For a missing
// sentence part is 1 (where it goes and how it starts) or 2 (how it goes
// on); other kinds ignore part.
func detail(e dialog.Edit, cur []string, part int, rng *rand.Rand) string {
	i, j := where(e, cur)
	switch e.Kind {
	case KindDeleteSentence:
		return fmt.Sprintf("Please take out the sentence \"%s\".", e.From)
	case KindSwap:
		return fmt.Sprintf("Swap sentences %d and %d.", i+1, j+1)
	case KindInsertSentence:
		first, rest := halves(e.To)
		if part == 2 {
			return fmt.Sprintf("The new sentence goes on \"%s\".", rest)
		}
		if i < 0 {
			return fmt.Sprintf("At the start, add a new sentence that starts \"%s\".", first)
		}
		return fmt.Sprintf("After sentence %d, add a new sentence that starts \"%s\".", i+1, first)
	}
	return phraseDetail(i, e.From, e.To, rng)
}

// describeEdit fills an edit's Hint and Detail as the user would say them
// about the draft. For a missing sentence Detail holds both halves.
func describeEdit(e *dialog.Edit, draft []string) {
	rng := rand.New(rand.NewPCG(uint64(len(e.From)), uint64(len(e.To))))
	e.Hint = hint(*e, draft, rng)
	e.Detail = detail(*e, draft, 1, rng)
	if e.Kind == KindInsertSentence {
		e.Detail += " " + detail(*e, draft, 2, rng)
	}
}

var openings = map[string]string{
	"memo": "memo", "note": "note", "product": "product description", "instructions": "set of instructions",
}

// openingFor is the coarse request a user starts with.
func openingFor(family string) string {
	noun, ok := openings[family]
	if !ok {
		noun = "text"
	}
	return fmt.Sprintf("Can you help me fix this %s? A few things in it are wrong.", noun)
}

// instructionFor states the user's whole goal for the oracle context.
func instructionFor(o *dialog.Oracle) string {
	var b strings.Builder
	b.WriteString("You want the draft to read exactly like your target document. The changes it needs:")
	for _, e := range o.Edits {
		b.WriteString(" ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// diffDetail finds a change outside the plan that would bring cur closer
// to target: when both have the same number of sentences, the smallest
// phrase around the first differing words of the first differing
// sentence; otherwise a sentence target does not have. ok is false when
// no such change can be stated without giving away a whole target
// sentence.
func diffDetail(cur, target []string, rng *rand.Rand) (string, bool) {
	text := JoinSentences(cur)
	if len(cur) != len(target) {
		for _, s := range cur {
			if !slices.Contains(target, s) && len(cur) > len(target) {
				return fmt.Sprintf("Please take out the sentence \"%s\".", s), true
			}
		}
		return "", false
	}
	for i := range cur {
		if cur[i] == target[i] {
			continue
		}
		a, b := strings.Fields(cur[i]), strings.Fields(target[i])
		p := 0
		for p < len(a) && p < len(b) && a[p] == b[p] {
			p++
		}
		q := 0
		for q < len(a)-p && q < len(b)-p && a[len(a)-1-q] == b[len(b)-1-q] {
			q++
		}
		for _, c := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 1}, {1, 2}, {2, 2}} {
			l, r := c[0], c[1]
			if p-l < 0 || q-r < 0 {
				continue
			}
			from := strings.Join(a[p-l:len(a)-q+r], " ")
			to := strings.Join(b[p-l:len(b)-q+r], " ")
			if from == "" || to == "" || countPhrase(text, from) != 1 || strings.Contains(from+to, `"`) ||
				float64(wordCount(to)) > maxPhraseFrac*float64(len(b)) {
				continue
			}
			return phraseDetail(i, from, to, rng), true
		}
		return "", false
	}
	return "", false
}
