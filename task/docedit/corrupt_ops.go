package docedit

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/calibrl/calibrl/dialog"
)

// entry is one sentence of a draft being built: its text and the index
// of the target sentence it comes from (-1 for an added sentence).
type entry struct {
	text string
	tgt  int
}

// builder corrupts a target one step at a time and logs the inverse edits.
type builder struct {
	target   []string
	doc      string // the target as one text
	draft    []entry
	reserved map[int]bool // target sentences that must stay verbatim (swapped, dropped, anchors)
	touched  map[int]bool // target sentences changed by a word-level corruption
	edits    []dialog.Edit
	rng      *rand.Rand
}

func newBuilder(target []string, rng *rand.Rand) *builder {
	b := &builder{target: target, doc: JoinSentences(target), reserved: map[int]bool{}, touched: map[int]bool{}, rng: rng}
	for i, s := range target {
		b.draft = append(b.draft, entry{s, i})
	}
	return b
}

func (b *builder) texts() []string {
	out := make([]string, len(b.draft))
	for i, e := range b.draft {
		out[i] = e.text
	}
	return out
}

func (b *builder) text() string { return JoinSentences(b.texts()) }

// corrupt applies one corruption of the named kind and reports whether it
// found a place for it.
func (b *builder) corrupt(name string) bool {
	switch name {
	case "drop_sentence":
		return b.dropSentence()
	case "add_sentence":
		return b.addSentence()
	case "swap_sentences":
		return b.swapSentences()
	}
	// Word-level: try the target sentences in random order.
	for _, i := range b.rng.Perm(len(b.draft)) {
		e := b.draft[i]
		if e.tgt < 0 || b.reserved[e.tgt] {
			continue
		}
		toks := strings.Fields(e.text)
		newToks, kind := b.wordOp(name, toks)
		if newToks == nil {
			continue
		}
		if b.phraseEdit(i, toks, newToks, kind) {
			return true
		}
	}
	return false
}

// core splits a token into its word and trailing punctuation.
func core(tok string) (word, punct string) {
	w := strings.TrimRightFunc(tok, func(r rune) bool { return !isWordRune(r) })
	return w, tok[len(w):]
}

func isLowerWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	for _, r := range w {
		if !unicode.IsLower(r) {
			return false
		}
	}
	return true
}

// pickToken returns a random index of toks whose word satisfies ok, or -1.
func (b *builder) pickToken(toks []string, lo, hi int, ok func(word, punct string) bool) int {
	var cand []int
	for j := max(lo, 0); j < min(hi, len(toks)); j++ {
		if w, p := core(toks[j]); ok(w, p) {
			cand = append(cand, j)
		}
	}
	if len(cand) == 0 {
		return -1
	}
	return cand[b.rng.IntN(len(cand))]
}

func (b *builder) other(words []string, not string) string {
	for tries := 0; tries < 20; tries++ {
		if w := words[b.rng.IntN(len(words))]; w != not {
			return w
		}
	}
	return ""
}

// wordOp applies one word-level corruption to a sentence's tokens and
// returns the new tokens and the kind of the edit that undoes it, or nil.
func (b *builder) wordOp(name string, toks []string) ([]string, string) {
	out := slices.Clone(toks)
	setWord := func(j int, w string) []string {
		_, p := core(out[j])
		out[j] = w + p
		return out
	}
	switch name {
	case "replace_word":
		j := b.pickToken(toks, 1, len(toks), func(w, _ string) bool { return synonymGroup(w) != nil })
		if j < 0 {
			// Outside the embedded vocabulary (a real corpus): any plain word.
			j = b.pickToken(toks, 1, len(toks), func(w, _ string) bool { return isLowerWord(w) && len(w) >= 4 })
			if j < 0 {
				return nil, ""
			}
			return setWord(j, b.other(slices.Concat(synonyms...), "")), KindReplace
		}
		w, _ := core(toks[j])
		if r := b.other(synonymGroup(w), w); r != "" {
			return setWord(j, r), KindReplace
		}
	case "number":
		j := b.pickToken(toks, 0, len(toks), func(w, _ string) bool { _, err := strconv.Atoi(w); return err == nil && len(w) <= 6 })
		if j >= 0 {
			w, _ := core(toks[j])
			n, _ := strconv.Atoi(w)
			return setWord(j, strconv.Itoa(b.otherNumber(n))), KindNumber
		}
	case "name", "day":
		list := slotWords["name"]
		if name == "day" {
			list = slotWords["day"]
		}
		j := b.pickToken(toks, 0, len(toks), func(w, _ string) bool { return slices.Contains(list, w) })
		if j >= 0 {
			w, _ := core(toks[j])
			return setWord(j, b.other(list, w)), name
		}
	case "tense":
		j := b.pickToken(toks, 1, len(toks), func(w, _ string) bool { return tenseOther(w) != "" })
		if j >= 0 {
			w, _ := core(toks[j])
			return setWord(j, tenseOther(w)), KindTense
		}
	case "register":
		text := strings.Join(toks, " ")
		for _, k := range b.rng.Perm(len(registerPairs)) {
			pr := registerPairs[k]
			for _, d := range [][2]string{{pr[0], pr[1]}, {pr[1], pr[0]}} {
				if t, ok := replacePhrase(text, d[0], d[1]); ok {
					return strings.Fields(t), KindRegister
				}
			}
		}
	case "add_word":
		j := b.pickToken(toks, 1, len(toks), func(w, _ string) bool { return isLowerWord(w) })
		if j >= 0 {
			return slices.Insert(out, j, fillerWords[b.rng.IntN(len(fillerWords))]), KindDelete
		}
	case "drop_word":
		j := b.pickToken(toks, 1, len(toks)-1, func(w, p string) bool { return isLowerWord(w) && p == "" })
		if j >= 0 {
			return slices.Delete(out, j, j+1), KindInsert
		}
	case "add_phrase":
		last := len(toks) - 1
		w, p := core(toks[last])
		if w == "" || p == "" || len(toks) < 3 {
			return nil, ""
		}
		ph := strings.Fields(fillerPhrases[b.rng.IntN(len(fillerPhrases))])
		ph[len(ph)-1] += p
		out[last] = w
		return append(out, ph...), KindDelete
	case "drop_phrase":
		j := b.pickToken(toks, 1, len(toks)-2, func(w, p string) bool { return isLowerWord(w) && p == "" })
		if j >= 0 && len(toks) >= 7 {
			if w, p := core(toks[j+1]); isLowerWord(w) && p == "" {
				return slices.Delete(out, j, j+2), KindInsert
			}
		}
	}
	return nil, ""
}

func synonymGroup(w string) []string {
	for _, g := range synonyms {
		if slices.Contains(g, w) {
			return g
		}
	}
	return nil
}

func tenseOther(w string) string {
	for _, p := range tensePairs {
		switch w {
		case p[0]:
			return p[1]
		case p[1]:
			return p[0]
		}
	}
	return ""
}

// otherNumber draws a plausible different number: near a small one, or
// a round neighbour of a large one.
func (b *builder) otherNumber(n int) int {
	for {
		var m int
		if n <= 20 {
			m = 1 + b.rng.IntN(20)
		} else {
			step := max(5, n/10/5*5)
			m = n + step*(b.rng.IntN(7)-3)
		}
		if m != n && m > 0 {
			return m
		}
	}
}

// phraseEdit records a word-level corruption of draft sentence i from
// old to new tokens: it finds the smallest phrase around the change that
// is unique on both sides (see the Kind constants) and commits it.
func (b *builder) phraseEdit(i int, old, new []string, kind string) bool {
	p := 0
	for p < len(old) && p < len(new) && old[p] == new[p] {
		p++
	}
	q := 0
	for q < len(old)-p && q < len(new)-p && old[len(old)-1-q] == new[len(new)-1-q] {
		q++
	}
	if p == len(old) && p == len(new) {
		return false
	}
	newSent := strings.Join(new, " ")
	texts := b.texts()
	texts[i] = newSent
	draft := JoinSentences(texts)
	for _, c := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {0, 2}, {2, 1}, {1, 2}, {2, 2}} {
		l, r := c[0], c[1]
		if p-l < 0 || q-r < 0 {
			continue
		}
		if l+r == 0 && (len(old)-q == p || len(new)-q == p) {
			continue // a bare insertion or deletion needs a neighbour to anchor it
		}
		to := strings.Join(old[p-l:len(old)-q+r], " ")
		from := strings.Join(new[p-l:len(new)-q+r], " ")
		if float64(wordCount(to)) > maxPhraseFrac*float64(len(old)) || wordCount(to) >= len(old) {
			return false
		}
		if countPhrase(draft, from) != 1 || countPhrase(b.doc, from) != 0 ||
			countPhrase(b.doc, to) != 1 || countPhrase(draft, to) != 0 ||
			findPhrase(from, to) >= 0 || findPhrase(to, from) >= 0 || strings.Contains(from+to, `"`) {
			continue
		}
		// Earlier edits must stay findable.
		for _, e := range b.edits {
			if isPhraseKind(e.Kind) && (countPhrase(draft, e.From) != 1 || countPhrase(draft, e.To) != 0) {
				return false
			}
		}
		tgt := b.draft[i].tgt
		b.draft[i].text = newSent
		b.touched[tgt] = true
		b.edits = append(b.edits, dialog.Edit{Kind: kind, Sentence: tgt, From: from, To: to})
		return true
	}
	return false
}

func (b *builder) dropSentence() bool {
	if len(b.draft) < 2 {
		return false
	}
	for _, i := range b.rng.Perm(len(b.draft)) {
		k := b.draft[i].tgt
		if k < 0 || b.reserved[k] || b.touched[k] || wordCount(b.target[k]) < 2 {
			continue
		}
		anchor := ""
		if k > 0 {
			prev := slices.IndexFunc(b.draft, func(e entry) bool { return e.tgt == k-1 })
			if prev < 0 || b.reserved[k-1] || b.touched[k-1] {
				continue
			}
			anchor = b.target[k-1]
		}
		b.reserved[k] = true
		if k > 0 {
			b.reserved[k-1] = true
		}
		b.draft = slices.Delete(b.draft, i, i+1)
		b.edits = append(b.edits, dialog.Edit{Kind: KindInsertSentence, Sentence: k, From: anchor, To: b.target[k]})
		return true
	}
	return false
}

func (b *builder) addSentence() bool {
	for _, k := range b.rng.Perm(len(extraSentences)) {
		s := extraSentences[k]
		if countPhrase(b.doc, s) > 0 || slices.Contains(b.texts(), s) || b.holdsEditPhrase(s) {
			continue
		}
		at := 1 + b.rng.IntN(len(b.draft)) // never first: the opening sentence stays
		sent := 0
		if prev := b.draft[at-1].tgt; prev >= 0 {
			sent = prev + 1
		}
		b.draft = slices.Insert(b.draft, at, entry{s, -1})
		b.edits = append(b.edits, dialog.Edit{Kind: KindDeleteSentence, Sentence: sent, From: s})
		return true
	}
	return false
}

func (b *builder) swapSentences() bool {
	for _, i := range b.rng.Perm(max(len(b.draft)-1, 0)) {
		x, y := b.draft[i], b.draft[i+1]
		if x.tgt < 0 || y.tgt != x.tgt+1 || b.reserved[x.tgt] || b.reserved[y.tgt] || b.touched[x.tgt] || b.touched[y.tgt] {
			continue
		}
		b.draft[i], b.draft[i+1] = y, x
		b.reserved[x.tgt], b.reserved[y.tgt] = true, true
		b.edits = append(b.edits, dialog.Edit{Kind: KindSwap, Sentence: x.tgt, From: y.text, To: x.text})
		return true
	}
	return false
}

// holdsEditPhrase reports whether s holds a word-level edit's phrase, which
// would then no longer be unique in the draft.
func (b *builder) holdsEditPhrase(s string) bool {
	for _, e := range b.edits {
		if isPhraseKind(e.Kind) && (findPhrase(s, e.From) >= 0 || findPhrase(s, e.To) >= 0) {
			return true
		}
	}
	return false
}
