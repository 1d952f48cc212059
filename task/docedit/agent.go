package docedit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	typos "github.com/calibrl/calibrl/typo"
)

// The scripted reference agents. They see only the view (the draft) and
// the conversation, and read the user's concrete instructions with
// parseOps. Profiles:
//
//   - careful: asks what to change, for the exact words; collects every
//     instruction (asking how a new sentence goes on when given its first
//     half) until the user has nothing more, then shows the revision;
//     after that it shows a new revision whenever it learns something.
//   - sloppy: careful, but each instruction it carries out is, with
//     chance SlipRate, forgotten or done with a misspelt word.
//   - target-seeker: asks the user to paste the final text, every turn,
//     and shows whatever text the user pastes as its revision.
//   - guesser: never asks; every turn it shows a revision with its own
//     guesses (first anywhere, then at what the user's vague hints point
//     to: a synonym, a verb's tense, a number, a name, the tone, dropping
//     a sentence) plus any instruction the user volunteered.
var profiles = []string{"careful", "sloppy", "target-seeker", "guesser"}

// Agent messages, fixed so that a small language model can imitate them.
const (
	msgAskFirst = "What should I change? Please tell me the exact words."
	msgAskMore  = "Got it. What else should I change? Please tell me the exact words."
	msgAskExact = "What exactly should it say there? Please quote the exact words."
	msgAskRest  = "How does the new sentence continue? Please give me the exact words."
	msgAskPaste = "Could you paste the full text you want, so I can copy it exactly?"
)

// Scripted is a scripted docedit agent.
type Scripted struct {
	profile  string
	slipRate float64
}

// NewScripted builds the scripted agent of a profile; slipRate is the
// sloppy agent's chance of getting an instruction wrong.
func NewScripted(profile string, slipRate float64) (*Scripted, error) {
	for _, p := range profiles {
		if p == profile {
			if slipRate < 0 || slipRate > 1 {
				return nil, fmt.Errorf("docedit: slip rate %g not in [0,1]", slipRate)
			}
			return &Scripted{profile: profile, slipRate: slipRate}, nil
		}
	}
	return nil, fmt.Errorf("docedit: unknown agent profile %q (known: %s)", profile, strings.Join(profiles, ", "))
}

// NewSession starts one episode's agent.
func (s *Scripted) NewSession(v *dialog.View, rng *rand.Rand) dialog.AgentSession {
	return &agentSession{profile: s.profile, slipRate: s.slipRate, rng: rng, ed: newEditor(v.Draft)}
}

type agentSession struct {
	profile  string
	slipRate float64
	rng      *rand.Rand
	ed       *editor
	turns    int
	revised  bool
	restAsks int // asks in a row for the rest of a new sentence
}

func revision(intro, doc, outro string) string {
	msg := intro + "\n" + DocMarker + "\n" + doc
	if outro != "" {
		msg += "\n\n" + outro
	}
	return msg
}

// Act answers the conversation so far.
func (a *agentSession) Act(_ context.Context, history []dialog.Message) (string, error) {
	a.turns++
	user := ""
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == dialog.RoleUser {
			user = history[i].Content
			break
		}
	}
	ops := parseOps(user)
	switch a.profile {
	case "target-seeker":
		for _, o := range ops {
			if o.kind == opPaste {
				a.ed.apply(o)
				a.revised = true
			}
		}
		if a.revised {
			return revision("Here is your text.", a.ed.show(), ""), nil
		}
		return msgAskPaste, nil
	case "guesser":
		for _, o := range ops {
			a.ed.apply(o)
		}
		a.guess(user, len(ops) > 0)
		return revision("I improved the wording.", a.ed.show(), ""), nil
	}
	return a.careful(user, ops), nil
}

// careful is the careful and sloppy profiles' turn.
func (a *agentSession) careful(user string, ops []op) string {
	applied, rest := 0, false
	for _, o := range ops {
		if o.kind == opInsertRest {
			rest = true
		}
		if a.profile == "sloppy" && o.kind != opInsertStart && a.rng.Float64() < a.slipRate {
			if a.rng.IntN(2) == 0 {
				applied++ // forgotten, but it thinks it did it
				if o.kind == opInsertRest {
					a.ed.pending = nil
				}
				continue
			}
			switch o.kind { // the place is read right; the new words are not
			case opReplace:
				o.b = misspell(a.rng, o.b)
			case opInsertRest:
				o.a = misspell(a.rng, o.a)
			}
		}
		if a.ed.apply(o) {
			applied++
		}
	}
	if a.ed.pending != nil && !rest {
		// Ask how a new sentence goes on; after two unanswered asks, let
		// it go rather than ask forever.
		if a.restAsks++; a.restAsks <= 2 {
			return msgAskRest
		}
		a.ed.pending = nil
	}
	a.restAsks = 0
	switch {
	case thatsAllRe.MatchString(user) || (a.revised && applied > 0):
		a.revised = true
		return revision("Here is the new version.", a.ed.show(), "Is anything else wrong? Please tell me the exact words.")
	case applied > 0:
		return msgAskMore
	case a.turns == 1:
		return msgAskFirst
	}
	return msgAskExact
}

var (
	hintSentenceRe = regexp.MustCompile(`(?i)\b(first|second|third|fourth|fifth|sixth)\b`)
	hintKinds      = []struct {
		re   *regexp.Regexp
		kind string
	}{
		{regexp.MustCompile(`(?i)\btense\b`), "tense"},
		{regexp.MustCompile(`(?i)\bnumbers?\b`), "number"},
		{regexp.MustCompile(`(?i)\b(name|person)\b`), "name"},
		{regexp.MustCompile(`(?i)\bday\b`), "day"},
		{regexp.MustCompile(`(?i)\b(wording|tone)\b`), "register"},
		{regexp.MustCompile(`(?i)shouldn't be there|don't want`), "drop"},
		{regexp.MustCompile(`(?i)\bmissing\b`), ""}, // nothing to guess from
	}
)

// guess makes the guesser's unrequested changes. On its first turn it
// makes one or two plausible edits anywhere (a synonym, a change of tense
// or of tone); later it acts on the user's vague hint, guessing a change
// of the named kind in the named sentence ("The tense in the second
// sentence is wrong." flips a verb there), unless the user gave exact
// instructions this turn.
func (a *agentSession) guess(user string, instructed bool) {
	b := &builder{rng: a.rng}
	change := func(i int, kind string) {
		if i < 0 || i >= len(a.ed.doc) {
			return
		}
		if kind == "drop" {
			a.ed.doc = append(a.ed.doc[:i], a.ed.doc[i+1:]...)
			return
		}
		if nt, _ := b.wordOp(kind, strings.Fields(a.ed.doc[i].text)); nt != nil {
			a.ed.doc[i].text = strings.Join(nt, " ")
		}
	}
	if a.turns == 1 {
		for n := 1 + a.rng.IntN(2); n > 0; n-- {
			change(a.rng.IntN(len(a.ed.doc)), []string{"replace_word", "tense", "register"}[a.rng.IntN(3)])
		}
		return
	}
	m := hintSentenceRe.FindStringSubmatch(user)
	if instructed || m == nil {
		return
	}
	i := slices.Index(ordinals, strings.ToLower(m[1]))
	kind := "replace_word"
	for _, h := range hintKinds {
		if h.re.MatchString(user) {
			kind = h.kind
			break
		}
	}
	if kind != "" {
		change(i, kind)
	}
}

// misspell swaps two neighbouring letters of the longest word of s.
func misspell(rng *rand.Rand, s string) string {
	words := strings.Fields(s)
	best := -1
	for i, w := range words {
		if len(w) >= 4 && typos.Letters(w) && (best < 0 || len(w) > len(words[best])) {
			best = i
		}
	}
	if best < 0 {
		return s
	}
	w := []byte(words[best])
	j := 1 + rng.IntN(len(w)-2)
	w[j], w[j+1] = w[j+1], w[j]
	words[best] = string(w)
	return strings.Join(words, " ")
}
