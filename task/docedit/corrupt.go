package docedit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/metric"
)

// Edit kinds: the Kind of each dialog.Edit in a user's hidden plan. Each
// is the inverse of one corruption that made the draft from the target.
//
// The word-level kinds (replace, insert, delete, number, name, day,
// tense, register) all say "where the draft has From, the target has To":
// From occurs exactly once in the draft and never in the target, To once
// in the target and never in the draft, neither inside the other, and To
// is never a whole sentence. The sentence kinds are:
//
//   - insert_sentence: To is a target sentence missing from the draft; it
//     goes right after the sentence From ("" = at the start).
//   - delete_sentence: From is a draft sentence the target does not have.
//   - swap: From and To are two sentences in the draft's order; the
//     target has them the other way round.
const (
	KindReplace        = "replace"
	KindInsert         = "insert"
	KindDelete         = "delete"
	KindNumber         = "number"
	KindName           = "name"
	KindDay            = "day"
	KindTense          = "tense"
	KindRegister       = "register"
	KindInsertSentence = "insert_sentence"
	KindDeleteSentence = "delete_sentence"
	KindSwap           = "swap"
)

// isPhraseKind reports the word-level kinds.
func isPhraseKind(kind string) bool {
	switch kind {
	case KindInsertSentence, KindDeleteSentence, KindSwap:
		return false
	}
	return true
}

// maxPhraseFrac bounds a word-level edit's target phrase to this share of
// its sentence's words, so stating the edit never states the sentence.
const maxPhraseFrac = 0.6

// ApplyEdits applies a plan to a draft. Edits are applied in the order
// given; a valid plan gives the same result in any order.
func ApplyEdits(draft string, edits []dialog.Edit) (string, error) {
	sents := SplitSentences(draft)
	for i, e := range edits {
		var err error
		if sents, err = applyEdit(sents, e); err != nil {
			return "", fmt.Errorf("edit %d (%s): %w", i, e.Kind, err)
		}
	}
	return JoinSentences(sents), nil
}

func indexOf(sents []string, s string) int { return slices.Index(sents, s) }

func applyEdit(sents []string, e dialog.Edit) ([]string, error) {
	switch e.Kind {
	case KindDeleteSentence:
		i := indexOf(sents, e.From)
		if i < 0 {
			return nil, fmt.Errorf("no sentence %q", e.From)
		}
		return slices.Delete(slices.Clone(sents), i, i+1), nil
	case KindInsertSentence:
		at := 0
		if e.From != "" {
			i := indexOf(sents, e.From)
			if i < 0 {
				return nil, fmt.Errorf("no sentence %q to insert after", e.From)
			}
			at = i + 1
		}
		return slices.Insert(slices.Clone(sents), at, e.To), nil
	case KindSwap:
		i, j := indexOf(sents, e.From), indexOf(sents, e.To)
		if i < 0 || j < 0 {
			return nil, fmt.Errorf("no sentences %q and %q to swap", e.From, e.To)
		}
		out := slices.Clone(sents)
		out[i], out[j] = out[j], out[i]
		return out, nil
	}
	doc, ok := replacePhrase(JoinSentences(sents), e.From, e.To)
	if !ok {
		return nil, fmt.Errorf("no %q in the document", e.From)
	}
	return SplitSentences(doc), nil
}

// ValidatePlan checks that edits turn draft into target in their order and
// in reverse order, and that every edit keeps the promises of its kind
// (see the Kind constants).
func ValidatePlan(draft, target string, edits []dialog.Edit) error {
	if len(edits) == 0 {
		return errors.New("empty plan")
	}
	for _, order := range [][]dialog.Edit{edits, reversed(edits)} {
		got, err := ApplyEdits(draft, order)
		if err != nil {
			return err
		}
		if got != target {
			return fmt.Errorf("plan gives %q, want %q", got, target)
		}
	}
	tsents := SplitSentences(target)
	for _, e := range edits {
		if strings.Contains(e.From+e.To, `"`) {
			return fmt.Errorf("%s edit holds a double quote", e.Kind)
		}
		if !isPhraseKind(e.Kind) {
			if e.Kind == KindInsertSentence && (wordCount(e.To) < 2 || countPhrase(draft, e.To) > 0) {
				return fmt.Errorf("inserted sentence %q too short or already in the draft", e.To)
			}
			continue
		}
		switch {
		case countPhrase(draft, e.From) != 1 || countPhrase(target, e.From) != 0:
			return fmt.Errorf("%s: %q not once in the draft and absent from the target", e.Kind, e.From)
		case countPhrase(target, e.To) != 1 || countPhrase(draft, e.To) != 0:
			return fmt.Errorf("%s: %q not once in the target and absent from the draft", e.Kind, e.To)
		case findPhrase(e.From, e.To) >= 0 || findPhrase(e.To, e.From) >= 0:
			return fmt.Errorf("%s: %q and %q overlap", e.Kind, e.From, e.To)
		case slices.Contains(tsents, e.To):
			return fmt.Errorf("%s: %q is a whole sentence", e.Kind, e.To)
		}
	}
	return nil
}

func reversed(es []dialog.Edit) []dialog.Edit {
	out := slices.Clone(es)
	slices.Reverse(out)
	return out
}

// corruptions are the kinds of damage a draft is made with, with weights.
// Each names the kind of the edit that undoes it.
var corruptions = []struct {
	name   string
	weight float64
}{
	{"replace_word", 1.5}, {"number", 1.2}, {"name", 0.8}, {"day", 0.8}, {"tense", 0.8}, {"register", 0.8},
	{"add_word", 0.8}, {"drop_word", 0.8}, {"add_phrase", 1.2}, {"drop_phrase", 1.2},
	{"drop_sentence", 1.2}, {"add_sentence", 1.2}, {"swap_sentences", 1.2},
}

// MakeDraft corrupts target into a draft with a plan of between
// cfg.MinEdits and cfg.MaxEdits edits whose sentence BLEU against the
// target lies in [cfg.MinDraftBLEU, cfg.MaxDraftBLEU]. The number of
// edits is drawn uniformly first and the corruptions are redrawn until
// the draft lands in the band, so plans of every length occur (a short
// plan then tends to hold a strong corruption, such as a dropped
// sentence). Edits come in the order of the target sentences they touch.
func MakeDraft(target string, cfg *Config, rng *rand.Rand) (string, []dialog.Edit, error) {
	tsents := SplitSentences(target)
	if len(tsents) == 0 {
		return "", nil, errors.New("docedit: empty target document")
	}
	total := 0.0
	for _, c := range corruptions {
		total += c.weight
	}
	n := 0
	for attempt := 0; attempt < 400; attempt++ {
		if attempt%100 == 0 { // a length that never lands in the band is given up
			n = cfg.MinEdits + rng.IntN(cfg.MaxEdits-cfg.MinEdits+1)
		}
		b := newBuilder(tsents, rng)
		for tries := 0; tries < 40 && len(b.edits) < n; tries++ {
			x := rng.Float64() * total
			name := corruptions[len(corruptions)-1].name
			for _, c := range corruptions {
				if x < c.weight {
					name = c.name
					break
				}
				x -= c.weight
			}
			b.corrupt(name)
		}
		if len(b.edits) < n {
			continue
		}
		draft := b.text()
		if bleu := metric.SentenceBLEU(draft, target); bleu < cfg.MinDraftBLEU || bleu > cfg.MaxDraftBLEU {
			continue
		}
		if !slices.Equal(SplitSentences(draft), b.texts()) {
			continue // a corruption moved a sentence boundary
		}
		edits := b.edits
		slices.SortStableFunc(edits, func(a, c dialog.Edit) int { return a.Sentence - c.Sentence })
		if ValidatePlan(draft, target, edits) != nil {
			continue
		}
		return draft, edits, nil
	}
	return "", nil, fmt.Errorf("docedit: could not corrupt %q into a draft of BLEU %g–%g", target, cfg.MinDraftBLEU, cfg.MaxDraftBLEU)
}
