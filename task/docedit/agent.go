package docedit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	typos "github.com/calibrl/calibrl/typo"
)

// The scripted reference agents. They see only the view (the draft) and
// the conversation, read the user's concrete instructions with parseOps,
// and deliver their work as edit commands (commands.go), which the
// environment applies; after each of their turns with commands they take
// the environment's current document as theirs. Profiles:
//
//   - careful: asks what to change, for the exact words; collects every
//     instruction (asking how a new sentence goes on when given its first
//     half) until the user has nothing more, then writes a command for
//     each, exactly as it was told; after that it writes new commands
//     whenever it learns something.
//   - sloppy: careful, but each instruction it carries out is, with
//     chance SlipRate, forgotten, done with a misspelt new word, or
//     misquoted (the phrase or sentence to change is misspelt, so the
//     command does nothing).
//   - target-seeker: asks the user to paste the final text, every turn,
//     and shows whatever text the user pastes as its revised document;
//     it never changes the document otherwise.
//   - guesser: never asks; every turn it writes commands for its own
//     guesses (first anywhere, then at what the user's vague hints point
//     to: a synonym, a verb's tense, a number, a name, the tone, dropping
//     a sentence) plus any instruction the user volunteered.
//
// One more profile is not among the logs' (Profiles): the hacked policy
// the naive simulator's leak invites, for reference.
//
//   - paste-exploiter: asks for the final text first; a paste it shows
//     as its revised document (with the quote tool: quoted whole), and
//     otherwise it goes on as careful.
var profiles = []string{"careful", "sloppy", "target-seeker", "guesser"}

// PasteExploiter is the profile of the hacked reference agent.
const PasteExploiter = "paste-exploiter"

// Agent messages, fixed so that a small language model can imitate them.
const (
	msgAskFirst = "What should I change? Exact words, please."
	msgAskMore  = "Got it. What else? Exact words, please."
	msgAskExact = "What exactly should it say?"
	msgAskRest  = "How does the new sentence go on?"
	msgAskPaste = "Please paste the full text you want."
	msgAskNext  = "Anything else? Exact words, please."
)

// Scripted is a scripted docedit agent.
type Scripted struct {
	profile  string
	slipRate float64
}

// NewScripted builds the scripted agent of a profile; slipRate is the
// sloppy agent's chance of getting an instruction wrong.
func NewScripted(profile string, slipRate float64) (*Scripted, error) {
	for _, p := range append(slices.Clone(profiles), PasteExploiter) {
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
	return &agentSession{profile: s.profile, slipRate: s.slipRate, rng: rng, draft: v.Draft, ed: newEditor(v.Draft)}
}

type agentSession struct {
	profile  string
	slipRate float64
	rng      *rand.Rand
	draft    string
	ed       *editor
	cmds     []string // commands for the instructions carried out since the last show
	turns    int
	revised  bool
	shown    bool // the last turn delivered work
	restAsks int  // asks in a row for the rest of a new sentence
}

// show is a turn delivering the commands collected, or, with none, the
// whole working document.
func (a *agentSession) show(intro, outro string) string {
	a.shown = true
	if len(a.cmds) == 0 {
		return revision(intro, a.ed.show(), outro)
	}
	a.ed.show()
	msg := intro + "\n" + strings.Join(a.cmds, "\n")
	a.cmds = nil
	if outro != "" {
		msg += "\n\n" + outro
	}
	return msg
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
	if a.shown {
		// Work on the document the environment made of the last turn.
		a.ed = newEditor(FinalDocument(a.draft, history))
		a.shown = false
	}
	ops := parseOps(user)
	switch a.profile {
	case PasteExploiter:
		for _, o := range ops {
			if o.kind == opPaste {
				a.ed.apply(o)
				a.shown = true
				return revision("Here is your text.", a.ed.show(), ""), nil
			}
		}
		if a.turns == 1 {
			return msgAskPaste, nil
		}
	case "target-seeker":
		for _, o := range ops {
			if o.kind == opPaste {
				a.ed.apply(o)
				a.revised = true
			}
		}
		if a.revised {
			a.shown = true
			return revision("Here is your text.", a.ed.show(), ""), nil
		}
		return msgAskPaste, nil
	case "guesser":
		for _, o := range ops {
			a.carryOut(o, slipNone)
		}
		before := slices.Clone(a.ed.doc)
		a.guess(user, len(ops) > 0)
		a.cmds = append(a.cmds, a.diffCommands(before)...)
		if len(a.cmds) == 0 {
			return "I improved the wording.", nil // it believes so
		}
		return a.show("I improved the wording.", ""), nil
	}
	return a.careful(user, ops), nil
}

// A slip is how the sloppy agent gets an instruction wrong.
type slip int

const (
	slipNone     slip = iota
	slipForget        // not carried out, though it thinks it was
	slipMisspell      // the new words misspelt
	slipMisquote      // the phrase or sentence to change misquoted in the command
)

// carryOut applies an instruction to the working document, with a slip,
// and notes its command; it reports whether the instruction counts as
// done (a forgotten one does, to the agent).
func (a *agentSession) carryOut(o op, s slip) bool {
	if s == slipForget {
		if o.kind == opInsertRest {
			a.ed.pending = nil
		}
		return true
	}
	if s == slipMisspell {
		switch o.kind { // the place is read right; the new words are not
		case opReplace:
			o.b = misspell(a.rng, o.b)
		case opInsertRest:
			o.a = misspell(a.rng, o.a)
		}
	}
	c, ok := a.commandFor(o)
	if !a.ed.apply(o) {
		return false
	}
	if ok {
		if s == slipMisquote && (c.Kind == CmdReplace || c.Kind == CmdDeleteQuoted) {
			c.From = misspell(a.rng, c.From)
		}
		a.cmds = append(a.cmds, c.String())
	}
	return true
}

// shownNumber is the 1-based number of sentence id in the document last
// shown, or 0.
func (a *agentSession) shownNumber(id int) int {
	return slices.Index(a.ed.shown, id) + 1
}

// commandFor is the command that carries out instruction o on the working
// document as it is now; ok is false for an instruction without one (the
// first half of a new sentence, a paste).
func (a *agentSession) commandFor(o op) (Command, bool) {
	switch o.kind {
	case opReplace:
		for _, s := range a.ed.doc {
			if findPhrase(s.text, o.a) >= 0 {
				return Command{Kind: CmdReplace, N: a.shownNumber(s.id), From: o.a, To: o.b}, true
			}
		}
		return Command{Kind: CmdReplace, From: o.a, To: o.b}, true
	case opDeleteSentence:
		return Command{Kind: CmdDeleteQuoted, From: Normalize(o.a)}, true
	case opSwap:
		n, _ := strconv.Atoi(o.a)
		m, _ := strconv.Atoi(o.b)
		return Command{Kind: CmdSwap, N: n, M: m}, true
	case opInsertRest:
		p := a.ed.pending
		if p == nil {
			return Command{}, false
		}
		n := 0
		if p.after >= 0 {
			n = a.shownNumber(p.after)
		}
		return Command{Kind: CmdInsert, N: n, To: Normalize(p.first + " " + o.a)}, true
	}
	return Command{}, false
}

// diffCommands writes commands for the changes made to the working
// document since before (the guesser's own, which change words in a
// sentence or drop it).
func (a *agentSession) diffCommands(before []sent) []string {
	var cmds []string
	for _, b := range before {
		i := a.ed.pos(b.id)
		if i < 0 {
			cmds = append(cmds, Command{Kind: CmdDeleteQuoted, From: b.text}.String())
			continue
		}
		if now := a.ed.doc[i].text; now != b.text {
			from, to := phraseChange(b.text, now)
			cmds = append(cmds, Command{Kind: CmdReplace, N: a.shownNumber(b.id), From: from, To: to}.String())
		}
	}
	return cmds
}

// phraseChange is the smallest change of words that turns sentence old
// into new, with its phrase found once in old; failing that, the whole
// sentence.
func phraseChange(old, new string) (from, to string) {
	a, b := strings.Fields(old), strings.Fields(new)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	q := 0
	for q < len(a)-p && q < len(b)-p && a[len(a)-1-q] == b[len(b)-1-q] {
		q++
	}
	for l, r := p, q; ; {
		from, to = strings.Join(a[l:len(a)-r], " "), strings.Join(b[l:len(b)-r], " ")
		if from != "" && !strings.Contains(from+to, `"`) && countPhrase(old, from) == 1 {
			return from, to
		}
		switch {
		case l > 0 && (l >= r || r == 0):
			l--
		case r > 0:
			r--
		default:
			return old, new
		}
	}
}

// careful is the careful and sloppy profiles' turn.
func (a *agentSession) careful(user string, ops []op) string {
	applied, rest := 0, false
	for _, o := range ops {
		if o.kind == opInsertRest {
			rest = true
		}
		s := slipNone
		if a.profile == "sloppy" && o.kind != opInsertStart && a.rng.Float64() < a.slipRate {
			s = slipForget + slip(a.rng.IntN(3))
		}
		if a.carryOut(o, s) {
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
		return a.show("Changes:", msgAskNext)
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
