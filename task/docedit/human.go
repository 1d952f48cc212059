package docedit

import (
	"context"
	"math/rand/v2"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/metric"
	typos "github.com/calibrl/calibrl/typo"
)

// Human is the human proxy: the held-out stand-in for a real person who
// holds a target document (docs/DESIGN.md, "The human proxy"). Its behaviour
// comes from the oracle's persona and the session's rng:
//
//   - it opens with the coarse request only;
//   - asked what to change, it talks about the next edit of its plan that
//     is still to do in the document it is looking at (the current
//     document: the draft as the agent's turns changed it): vaguely
//     ("The second sentence is off.") unless asked for the exact words, concretely when asked for them
//     (with chance Clarity at the first ask; always at the second), in
//     the templates of phrasing.go;
//   - a missing sentence is dictated in two halves, the second when the
//     agent asks how it goes on, so no message ever holds a target
//     sentence the draft lacks; it never pastes the target: asked for the
//     final text, it says it has none written out;
//   - each revision (a full document, or commands, read as the
//     document the environment made of them) is scored with sentence
//     BLEU; at or above the persona's Threshold it accepts and ends (dialog.Solved); a revision
//     that undoes an earlier fix is rejected with that fix restated; a
//     revision that does not raise BLEU costs patience; otherwise it goes
//     on to the next edit (stated concretely when the agent asks for
//     exact words, or with chance Verbosity/4 unasked);
//   - when its plan is done but the document still differs (an agent's
//     slip), it states the smallest differing phrase, or says vaguely that
//     something is still off;
//   - unclear or off-topic messages get a confused reply;
//   - unhelpful turns (confusing messages, asking for the final text,
//     revisions that do not help, asking again after everything was
//     said) each cost one unit of Patience; at zero it gives up
//     (dialog.GaveUp);
//   - a message carries a typo with chance TypoRate, never inside quotes
//     or in the words the detail templates are read by, and a filler
//     phrase with chance Verbosity/3.
type Human struct{}

// NewSession starts one episode's human proxy.
func (Human) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	h := &humanSession{o: o, rng: rng, target: SplitSentences(o.Truth), patience: max(1, o.Persona.Patience),
		cur: SplitSentences(o.Draft), told: make([]int, len(o.Edits)), toldRev: make([]int, len(o.Edits)), focus: -1}
	h.curBLEU = metric.SentenceBLEU(Normalize(o.Draft), o.Truth)
	return h
}

type humanSession struct {
	o         *dialog.Oracle
	rng       *rand.Rand
	target    []string
	cur       []string // the document the user is looking at
	curBLEU   float64
	told      []int // per edit: 0 nothing, 1 hinted, 2 stated (first half of a missing sentence), 3 second half
	toldRev   []int // revisions seen when the edit was last stated
	focus     int   // the edit last talked about
	revisions int
	saidAll   bool
	patience  int
	end       dialog.EndReason
}

// EndReason says why the session ended ("" while it goes on).
func (h *humanSession) EndReason() dialog.EndReason { return h.end }

var (
	humanAccept  = []string{"That's it, thank you!", "Perfect, that's what I wanted. Thanks!", "Great, that reads right now. Thank you!"}
	humanBetter  = []string{"That's better.", "Good, that part is fixed.", "Thanks, that's closer."}
	humanNoGain  = []string{"That didn't make it better.", "Hmm, that's not what I meant.", "No, that's not it."}
	humanUndo    = []string{"You undid one of my fixes.", "Wait, you changed back something that was right."}
	humanNoText  = []string{"I don't have the final text written out, that's why I need your help.", "I can't paste it, I only know what's wrong with this one."}
	humanAll     = []string{"That's all I can think of. Can I see the new version?", "That's everything. Can you show me the new version?"}
	humanAllOver = []string{"I already told you everything. Please show me the new version.", "Nothing else, just make those changes."}
	humanVague   = []string{"It still doesn't look quite right to me, but I can't say where.", "Something still feels off, I'm not sure what."}
	humanConfuse = []string{"I'm not sure what you mean.", "Sorry, I don't follow.", "What do you mean? I just want my text fixed."}
	humanGiveUp  = []string{"This isn't working. I'll fix it myself.", "Never mind, I'll do it on my own.", "This is taking too long. Bye."}
	humanFillers = []string{"Okay.", "Hmm.", "Let me look again.", "Right."}
)

// Open returns the coarse request.
func (h *humanSession) Open(context.Context) (string, error) {
	msg := h.o.Opening
	if h.rng.Float64() < h.o.Persona.Verbosity/2 {
		msg += " I need it today."
	}
	return h.noisy(msg), nil
}

func complete(e dialog.Edit) int {
	if e.Kind == KindInsertSentence {
		return 3
	}
	return 2
}

// Reply answers the agent's last message.
func (h *humanSession) Reply(_ context.Context, history []dialog.Message) (string, bool, error) {
	r := readTurn(h.o.Draft, history)
	var parts []string
	cost := 0
	switch {
	case r.hasDoc:
		h.revisions++
		bleu := metric.SentenceBLEU(r.doc, h.o.Truth)
		if bleu >= threshold(h.o) {
			h.end = dialog.Solved
			return h.noisy(pick(h.rng, humanAccept)), true, nil
		}
		next := SplitSentences(r.doc)
		undone := -1
		for i, e := range h.o.Edits {
			if stateOf(e, h.cur) == stateDone && stateOf(e, next) != stateDone {
				undone = i
				break
			}
		}
		h.cur = next
		switch {
		case undone >= 0:
			cost = 1
			h.told[undone] = 1 // state it again from the start
			parts = append(parts, pick(h.rng, humanUndo), h.state(undone))
		default:
			if bleu <= h.curBLEU {
				cost = 1
				parts = append(parts, pick(h.rng, humanNoGain))
			} else if h.rng.Float64() < 0.7 {
				parts = append(parts, pick(h.rng, humanBetter))
			}
			fb, _ := h.feedback(r.askExact || h.rng.Float64() < h.o.Persona.Verbosity/4)
			parts = append(parts, fb)
		}
		h.curBLEU = bleu
	case r.askTarget:
		cost = 1
		fb, _ := h.feedback(false)
		parts = append(parts, pick(h.rng, humanNoText), fb)
	case r.askRest && h.halfTold() >= 0:
		parts = append(parts, h.state(h.halfTold()))
	case r.askChange:
		fb, fresh := h.feedback(r.askExact)
		if !fresh {
			cost = 1
		}
		parts = append(parts, fb)
	default:
		cost = 1
		parts = append(parts, pick(h.rng, humanConfuse))
	}
	h.patience -= cost
	if h.patience <= 0 {
		h.end = dialog.GaveUp
		return h.noisy(pick(h.rng, humanGiveUp)), true, nil
	}
	return h.noisy(strings.Join(parts, " ")), false, nil
}

// halfTold returns an edit whose first half was dictated and second not.
func (h *humanSession) halfTold() int {
	if h.focus >= 0 && h.told[h.focus] == 2 && complete(h.o.Edits[h.focus]) == 3 {
		return h.focus
	}
	for i, e := range h.o.Edits {
		if h.told[i] == 2 && complete(e) == 3 && stateOf(e, h.cur) == stateOutstanding {
			return i
		}
	}
	return -1
}

// state states edit i concretely (the next half of a missing sentence).
func (h *humanSession) state(i int) string {
	e := h.o.Edits[i]
	part := 1
	if h.told[i] >= 2 && complete(e) == 3 {
		part = 2
	}
	h.told[i] = max(h.told[i], 1) + 1
	h.toldRev[i] = h.revisions
	h.focus = i
	return detail(e, h.cur, part, h.rng)
}

// feedback talks about the next thing to change; fresh is false when it
// has nothing new to say.
func (h *humanSession) feedback(exact bool) (msg string, fresh bool) {
	edits := h.o.Edits
	next := -1
	if f := h.focus; f >= 0 && stateOf(edits[f], h.cur) == stateOutstanding && h.told[f] < complete(edits[f]) {
		next = f
	}
	for i := 0; next < 0 && i < len(edits); i++ {
		if stateOf(edits[i], h.cur) == stateOutstanding && h.told[i] < complete(edits[i]) {
			next = i
		}
	}
	if next >= 0 {
		h.saidAll = false
		if !exact || (h.told[next] == 0 && h.rng.Float64() >= h.o.Persona.Clarity) {
			h.told[next], h.focus = max(h.told[next], 1), next
			return hint(edits[next], h.cur, h.rng), true
		}
		return h.state(next), true
	}
	// Everything still to do was said. Said before the last revision and
	// still not done: say it again.
	waiting := false
	for i, e := range edits {
		if stateOf(e, h.cur) != stateOutstanding {
			continue
		}
		if h.toldRev[i] < h.revisions {
			h.told[i] = 1
			return "You still haven't done this one. " + h.state(i), true
		}
		waiting = true
	}
	if waiting {
		if h.saidAll {
			return pick(h.rng, humanAllOver), false
		}
		h.saidAll = true
		return pick(h.rng, humanAll), true
	}
	if d, ok := diffDetail(h.cur, h.target, h.rng); ok {
		return d, true
	}
	return pick(h.rng, humanVague), false
}

// protected are the words the detail templates are read by; typos spare
// them so a typo never changes what an instruction says.
var protected = map[string]bool{"sentence": true, "sentences": true, "after": true, "start": true, "starts": true,
	"should": true, "change": true, "replace": true, "please": true, "Please": true, "After": true, "Sentence": true}

// noisy adds the persona's filler and typos to a message.
func (h *humanSession) noisy(msg string) string {
	if h.rng.Float64() < h.o.Persona.Verbosity/3 {
		msg = pick(h.rng, humanFillers) + " " + msg
	}
	if h.rng.Float64() < h.o.Persona.TypoRate {
		msg = typo(h.rng, msg)
	}
	return msg
}

// typo misspells one word of five or more letters outside double quotes
// (quoted text is what the agent must copy) and not a template keyword.
func typo(rng *rand.Rand, msg string) string {
	inQuote := false
	return typos.Misspell(rng, msg, func(w string) bool {
		q := strings.Count(w, `"`)
		ok := !inQuote && q == 0 && len(w) >= 5 && typos.Letters(w) && !protected[w]
		if q%2 == 1 {
			inQuote = !inQuote
		}
		return ok
	})
}
