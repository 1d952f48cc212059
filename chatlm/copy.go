package chatlm

import (
	"regexp"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/tokenizer"
)

// A simulator that copies the numbers it holds. A fitted simulator is
// conditioned on the oracle context (the instruction, the facts, the
// truth) and still misstates what it holds: "A-912" for "A-921",
// mathchat's seed-3 simulator stating 13% of its numbers wrong. Each such
// turn gives the agent a different problem from the one it is scored
// on, so the simulator's success drifts from a person's. User.Copy = CopyNumbers
// removes that cause at decoding time: every number a turn states must
// be one the problem holds (dialog.Oracle.KnownNumbers, the facts check's
// own definition), digit by digit. The model still chooses whether and
// which number to state, and everything else; only a digit that would
// make a number no held one begins with, or a non-digit that would end a
// number held by none, is never drawn. The turn's probabilities among the
// allowed tokens keep their ratios (lm.SampleConfig.Allow).
//
// Numbers are read as NumberPattern reads them, unsigned: digits joined
// by '.' or '/' ("2.5", "3/4"); a sign, a comma or any other character
// ends a number, so "A-921" states 921 and "1,200" states 1 and 200. A
// '.' or '/' after a number may end a sentence as well as continue the
// number, so it is allowed where either is; the token after it decides.

// numberRun is the number a turn's text ends in, possibly with the '.' or
// '/' that may continue it.
var numberRun = regexp.MustCompile(`\d+(?:[./]\d+)*[./]?$`)

// innerRuns are the numbers of a piece of text.
var innerRuns = regexp.MustCompile(`\d+(?:[./]\d+)*`)

// copyTokens sorts a tokenizer's ids once per simulator: the ones whose
// text holds a digit or begins with a separator are judged one by one,
// every other (the closing tokens included) only ends the number a turn
// is in.
type copyTokens struct {
	text    []string // id's text; "" for specials and ids past the tokenizer
	numeric []int
	plain   []int
}

func newCopyTokens(tok *tokenizer.Tokenizer, vocab int) *copyTokens {
	return sortCopyTokens(tokenTexts(tok, vocab))
}

// tokenTexts is each id's text, "" for specials and ids past the
// tokenizer (a model's vocabulary may be larger).
func tokenTexts(tok *tokenizer.Tokenizer, vocab int) []string {
	text := make([]string, vocab)
	for id := range text {
		if id < tok.VocabSize() && !tok.IsSpecial(id) {
			text[id] = tok.Decode([]int{id})
		}
	}
	return text
}

// sortCopyTokens sorts ids by their text.
func sortCopyTokens(text []string) *copyTokens {
	c := &copyTokens{text: text}
	for id, t := range text {
		if strings.ContainsAny(t, "0123456789") || strings.HasPrefix(t, ".") || strings.HasPrefix(t, "/") {
			c.numeric = append(c.numeric, id)
		} else {
			c.plain = append(c.plain, id)
		}
	}
	return c
}

// numberCopier is one conversation's constraint: the numbers its problem
// holds, every prefix of them, and the allowed ids after each number a
// turn has ended in so far.
type numberCopier struct {
	tokens *copyTokens
	known  map[string]bool // unsigned canonical numbers
	prefix map[string]bool // every non-empty prefix of them
	cache  map[string][]int
}

func newNumberCopier(tokens *copyTokens, o *dialog.Oracle) *numberCopier {
	c := &numberCopier{tokens: tokens, known: map[string]bool{}, cache: map[string][]int{}}
	for n := range o.KnownNumbers() {
		if n = strings.TrimPrefix(n, "-"); n != "" {
			c.known[n] = true
		}
	}
	c.prefix = prefixes(c.known)
	return c
}

// prefixes is every non-empty prefix of the strings of set.
func prefixes(set map[string]bool) map[string]bool {
	p := map[string]bool{}
	for s := range set {
		for i := 1; i <= len(s); i++ {
			p[s[:i]] = true
		}
	}
	return p
}

// allow is the ids that may follow a turn whose text so far is text; nil
// when every id may.
func (c *numberCopier) allow(text string) []int {
	run := numberRun.FindString(text)
	if ids, ok := c.cache[run]; ok {
		return ids
	}
	var ids []int
	if c.fits(run, "") {
		ids = append(ids, c.tokens.plain...)
	}
	ids = appendFitting(ids, c.tokens.numeric, c.tokens.text, func(x string) bool { return c.fits(run, x) })
	ids = restriction(ids, len(c.tokens.text))
	c.cache[run] = ids
	return ids
}

// appendFitting appends to ids the candidates whose text fits.
func appendFitting(ids, candidates []int, text []string, fits func(x string) bool) []int {
	for _, id := range candidates {
		if fits(text[id]) {
			ids = append(ids, id)
		}
	}
	return ids
}

// restriction is the allowed ids as allow returns them, nil when they
// are all vocab ids (nothing to restrict) or none (a run no held number
// or value begins with, which only text the constraint did not write can
// end in: the model goes on rather than stop the episode). They are
// sorted once here, for the cache: the sampler sorts them at every draw,
// and a sorted list costs that sort a pass (a draw from 480 allowed ids
// took 2.5× as long with them shuffled).
func restriction(ids []int, vocab int) []int {
	if len(ids) == vocab || len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	return ids
}

// fits reports whether text run followed by x states only held numbers:
// each number x closes is held, and one still open at the end begins a
// held number (or, ending in a separator, may be one that ended).
func (c *numberCopier) fits(run, x string) bool {
	y := run + x
	closed := x == "" // a plain token ends the run
	for _, loc := range innerRuns.FindAllStringIndex(y, -1) {
		n, end := y[loc[0]:loc[1]], loc[1]
		switch {
		case end == len(y) && closed:
			return c.known[n]
		case end == len(y):
			return c.prefix[n]
		case end == len(y)-1 && (y[end] == '.' || y[end] == '/') && !closed:
			return c.known[n] || c.prefix[y[loc[0]:]]
		case !c.known[n]:
			return false
		}
	}
	return true
}

// A simulator that copies whole values (dialog.CopyValues). Support's
// facts are ids, dates and emails: the numbers constraint keeps every
// digit held, but "omar84@" may still go on to another domain and
// "2026-" to another month. User.Copy = CopyValues holds every value a
// turn states (a dialog.ValueRun run with a digit or an '@') to a whole
// one its problem holds (dialog.Oracle.HeldValues), character by
// character. Words ("follow-up") are free; a word that turns into a
// value ("omar" + "84") must be the beginning of a held one from its
// first character. A '.' after a held value may end the sentence; edge
// separators around a value ("-A-921") are not part of it.
//
// A value may also begin with a word: support's emails begin with a
// name ("lena82@post.net"), and its quick simulators state another one
// ("The new email is yuki"), which the digits that follow cannot mend.
// The task names such words (ValueWordsOf); each is held like a value
// that has begun: a run that is one of them must begin a held value.

// valueTokens sorts a tokenizer's ids once per simulator for the values
// constraint: ids whose text holds a digit, an '@' or one of the value
// words as a run may begin a value (stating); ids that do not begin with
// a value character only end the run a turn is in (plain); the others
// (letters, "._+-" first) continue it.
type valueTokens struct {
	text  []string
	words map[string]bool // ValueWordsOf's
	// wordPrefix holds every non-empty prefix of the words
	// (valueCopier.mayGrowWord).
	wordPrefix map[string]bool
	stating    []int
	plain      []int
	going      []int
}

func newValueTokens(tok *tokenizer.Tokenizer, vocab int, words []string) *valueTokens {
	return sortValueTokens(tokenTexts(tok, vocab), words)
}

func sortValueTokens(text, words []string) *valueTokens {
	v := &valueTokens{text: text, words: map[string]bool{}}
	for _, w := range words {
		v.words[w] = true
	}
	v.wordPrefix = prefixes(v.words)
	for id, t := range text {
		switch {
		case v.states(t):
			v.stating = append(v.stating, id)
		case t == "" || !isValueByte(t[0]):
			v.plain = append(v.plain, id)
		default:
			v.going = append(v.going, id)
		}
	}
	return v
}

// states reports whether text holds a value or a value word as a run.
func (v *valueTokens) states(text string) bool {
	if dialog.IsValue(text) {
		return true
	}
	for _, r := range dialog.ValueRun.FindAllString(text, -1) {
		if v.words[dialog.TrimValue(r)] {
			return true
		}
	}
	return false
}

// valueRunEnd is the run of dialog.ValueRun's characters text ends in,
// found from the end: a regexp anchored at the end would try every start
// in the turn, each word a partial match, on every token of the turn.
func valueRunEnd(text string) string {
	i := len(text)
	for i > 0 && isValueByte(text[i-1]) {
		i--
	}
	return text[i:]
}

// isValueByte reports whether c is one of dialog.ValueRun's characters.
func isValueByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '@' || strings.IndexByte(dialog.ValueEdge, c) >= 0
}

// valueCopier is one conversation's values constraint.
type valueCopier struct {
	tokens *valueTokens
	held   map[string]bool // dialog.Oracle.HeldValues
	prefix map[string]bool // every non-empty prefix of them
	cache  map[string][]int
}

func newValueCopier(tokens *valueTokens, o *dialog.Oracle) *valueCopier {
	held := o.HeldValues()
	return &valueCopier{tokens: tokens, held: held, prefix: prefixes(held), cache: map[string][]int{}}
}

// allow is the ids that may follow a turn whose text so far is text; nil
// when every id may.
func (c *valueCopier) allow(text string) []int {
	run := valueRunEnd(text)
	if ids, ok := c.cache[run]; ok {
		return ids
	}
	fits := func(x string) bool { return c.fits(run, x) }
	var ids []int
	switch {
	case c.isValue(run) || c.mayGrowWord(run):
		// Stating a value (or a word that may grow into a value word):
		// every token is judged; the plain ones alike, by whether the
		// run may end here.
		if c.fits(run, "") {
			ids = append(ids, c.tokens.plain...)
		}
		ids = appendFitting(ids, c.tokens.going, c.tokens.text, fits)
	default:
		// A word or nothing: only a token that brings a digit or an '@'
		// can make a value.
		ids = append(ids, c.tokens.plain...)
		ids = append(ids, c.tokens.going...)
	}
	ids = appendFitting(ids, c.tokens.stating, c.tokens.text, fits)
	ids = restriction(ids, len(c.tokens.text))
	c.cache[run] = ids
	return ids
}

// fits reports whether run followed by x states only held values: each
// value x closes is a held one, and one still open at the end begins a
// held one (or is one followed by a '.' that may end a sentence). An x of
// "" (a plain token, the end of the turn) closes run.
func (c *valueCopier) fits(run, x string) bool {
	y := run + x
	for i, j := 0, 0; i < len(y); i = j {
		// y[i:j] is the next run of value characters (dialog.ValueRun's
		// matches, scanned by hand: this runs for every candidate token).
		for i < len(y) && !isValueByte(y[i]) {
			i++
		}
		for j = i; j < len(y) && isValueByte(y[j]); j++ {
		}
		r := y[i:j]
		if r == "" || !c.isValue(r) {
			continue
		}
		if j < len(y) || x == "" {
			if !c.closes(dialog.TrimValue(r)) {
				return false
			}
			continue
		}
		r = strings.TrimLeft(r, dialog.ValueEdge)
		if !c.prefix[r] && !(strings.HasSuffix(r, ".") && c.closes(r[:len(r)-1])) {
			return false
		}
	}
	return true
}

// closes reports whether a value may end as v: a held one, or a value
// word that begins one ("lena" of lena82@post.net).
func (c *valueCopier) closes(v string) bool {
	return c.held[v] || c.tokens.words[v] && c.prefix[v]
}

// mayGrowWord reports whether a token that continues run (a going one:
// no digit, '@' or value word of its own) may make it a value word: run,
// past its leading edge characters, begins one. Any other run stays a
// plain word whatever such a token adds (a word the token would bring
// whole makes it a stating one), so a turn's every new word no longer
// judges the whole vocabulary, as it did on a task with value words.
func (c *valueCopier) mayGrowWord(run string) bool {
	return c.tokens.wordPrefix[strings.TrimLeft(run, dialog.ValueEdge)]
}

// isValue reports whether a run states a value: dialog.IsValue, or one of
// the value words.
func (c *valueCopier) isValue(run string) bool {
	return dialog.IsValue(run) || c.tokens.words[dialog.TrimValue(run)]
}

// ValueWordsOf is the words task t's values may begin with that hold no
// digit or '@' (its method ValueWords: support's names, which begin its
// emails); none for a task without one.
func ValueWordsOf(t any) []string {
	if p, ok := t.(interface{ ValueWords() []string }); ok {
		return p.ValueWords()
	}
	return nil
}

// CopyWords is the value words a simulator copying as kind c on task t
// is held to: t's with CopyValues, none with another kind. User.CopyAs
// sets them; a run's manifest records them.
func CopyWords(t any, c dialog.Copy) []string {
	if c != dialog.CopyValues {
		return nil
	}
	return ValueWordsOf(t)
}

// CopyOf is the copy task t holds its calibrated simulator to when a run
// asks for one (learned+copy:DIR, reproduce --sim-copy): the kind its
// method SimCopy names (support's whole values), numbers for a task
// without one (mathchat's facts are numbers).
func CopyOf(t any) dialog.Copy {
	if p, ok := t.(interface{ SimCopy() dialog.Copy }); ok {
		return p.SimCopy()
	}
	return dialog.CopyNumbers
}
