package mathchat

import (
	"context"
	"math/big"
	"math/rand/v2"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	typos "github.com/calibrl/calibrl/typo"
)

// Human is the human proxy: the held-out stand-in for a real person
// holding a word problem (docs/DESIGN.md, "The human proxy"). Its behaviour
// comes from the oracle's persona and the session's rng:
//
//   - it opens with the problem in its vague form (hidden numbers
//     withheld, "some apples"), framed in one of several ways;
//   - it reveals a hidden fact only when the agent's message asks about
//     it (the question uses at least two of the fact's cue words, more
//     than for any other fact). With chance Clarity the reveal is the
//     whole sentence; otherwise it is partial (the number alone, or
//     hedged: "I think it was 4, let me check... yes, 4"), or, once per
//     fact, a question back ("Which number do you mean?");
//   - an unclear or off-topic message gets a confused reply;
//   - a wrong answer is rejected without any hint of the solution, as
//     often as it comes; a right one is accepted and ends the episode
//     (dialog.Solved);
//   - it never states the answer: asked for it, it says it does not know;
//   - unhelpful turns (confusing, off-topic, wrong answers, asking for
//     the answer or for a number it already gave) each cost one unit of
//     Patience; at zero it gives up (dialog.GaveUp);
//   - each message carries a typo with chance TypoRate (letters only,
//     never digits), and a filler phrase with chance Verbosity.
type Human struct{}

// NewSession starts one episode's human proxy.
func (Human) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	truth, _ := ParseTruth(o.Truth)
	return &humanSession{o: o, rng: rng, truth: truth, patience: max(1, o.Persona.Patience),
		revealed: map[int]bool{}, askedBack: map[int]bool{}}
}

type humanSession struct {
	o         *dialog.Oracle
	rng       *rand.Rand
	truth     *big.Rat
	patience  int
	revealed  map[int]bool // hidden facts told, by index in o.Facts
	askedBack map[int]bool // facts already answered with a question
	rejected  int
	end       dialog.EndReason
}

// EndReason says why the session ended ("" while it goes on).
func (h *humanSession) EndReason() dialog.EndReason { return h.end }

var (
	humanOpenings = []string{
		"Can you help me with this problem? %s",
		"I need help with a math problem. %s",
		"%s Can you help me?",
		"Hi! Here is my problem. %s I don't have all the numbers in my head, so ask me if you need one.",
		"I'm stuck on this one. %s",
	}
	humanFillers = []string{"Okay.", "Hmm.", "Well."}
	revealFiller = []string{"Let me look at my notes.", "Thanks for asking.", "Good question."}
	humanReveal  = []string{"%s", "Sure. %s", "Let me check. %s", "Oh right, %s"}
	humanPartial = []string{"%s.", "It was %s.", "I think it was %s, let me check... yes, %s.", "%s, I think."}
	humanBack    = []string{"Which number do you mean?", "Do you mean the one I left out? Which one?", "What do you mean exactly?"}
	humanConfuse = []string{"I'm not sure what you mean.", "Sorry, I don't follow.", "What do you mean? I just want to solve my problem."}
	humanNoIdea  = []string{"I don't know, that's why I'm asking you.", "I don't know the answer. That is what I need help with."}
	humanAgain   = []string{"I already told you. %s", "I said that already. %s"}
	humanGiven   = []string{"It is in the problem. %s", "That was in what I wrote. %s"}
	humanWrong   = []string{"Hmm, that doesn't match what I got.", "I don't think that's right. Can you check it?", "That's not what I have. Can you try again?"}
	humanWrong2  = []string{"That still doesn't look right to me.", "No, that's not it either.", "Still not right, I think."}
	humanRight   = []string{"Yes, that's what I got. Thanks!", "Great, that matches. Thank you!", "That's right, thanks for the help!"}
	humanGiveUp  = []string{"I don't think this is working. I'll ask someone else.", "Never mind, I'll figure it out myself.", "This is taking too long. Bye."}
)

func pick(rng *rand.Rand, xs []string) string { return xs[rng.IntN(len(xs))] }

// Open returns the vague problem in one of several framings.
func (h *humanSession) Open(context.Context) (string, error) {
	msg := strings.Replace(pick(h.rng, humanOpenings), "%s", h.o.Opening, 1)
	if h.rng.Float64() < h.o.Persona.Verbosity/2 {
		msg += " I have been stuck on it for a while."
	}
	return msg, nil
}

// Reply answers the agent's last message.
func (h *humanSession) Reply(_ context.Context, history []dialog.Message) (string, bool, error) {
	r := readAgent(lastAgent(history), h.o.Facts)
	var msg string
	cost := 1
	switch r.kind {
	case intentAnswer:
		if h.truth != nil && Equal(h.truth, r.answer) {
			h.end = dialog.Solved
			return h.noisy(pick(h.rng, humanRight), humanFillers), true, nil
		}
		h.rejected++
		if h.rejected == 1 {
			msg = pick(h.rng, humanWrong)
		} else {
			msg = pick(h.rng, humanWrong2)
		}
	case intentAskFact:
		f := h.o.Facts[r.fact]
		switch {
		case f.Hidden && !h.revealed[r.fact]:
			cost = 0
			msg = h.reveal(r.fact)
		case f.Hidden:
			msg = strings.Replace(pick(h.rng, humanAgain), "%s", f.Text, 1)
		default:
			msg = strings.Replace(pick(h.rng, humanGiven), "%s", f.Text, 1)
		}
	case intentAskAnswer:
		msg = pick(h.rng, humanNoIdea)
	case intentAskUnclear:
		msg = pick(h.rng, humanBack)
	default:
		msg = pick(h.rng, humanConfuse)
	}
	h.patience -= cost
	if h.patience <= 0 {
		h.end = dialog.GaveUp
		return h.noisy(pick(h.rng, humanGiveUp), humanFillers), true, nil
	}
	fillers := humanFillers
	if r.kind == intentAskFact && cost == 0 {
		fillers = revealFiller
	}
	return h.noisy(msg, fillers), false, nil
}

// reveal tells hidden fact i: whole with chance Clarity, else partially,
// or (once per fact) with a question back that tells nothing.
func (h *humanSession) reveal(i int) string {
	f := h.o.Facts[i]
	if h.rng.Float64() < h.o.Persona.Clarity {
		h.revealed[i] = true
		msg := pick(h.rng, humanReveal)
		text := f.Text
		if strings.HasPrefix(msg, "Oh") {
			text = lowerFirst(text)
		}
		return strings.Replace(msg, "%s", text, 1)
	}
	if !h.askedBack[i] && h.rng.IntN(2) == 0 {
		h.askedBack[i] = true
		return pick(h.rng, humanBack)
	}
	h.revealed[i] = true
	return strings.ReplaceAll(pick(h.rng, humanPartial), "%s", f.Value)
}

// noisy adds the persona's filler (one of fillers) and typos to a
// message.
func (h *humanSession) noisy(msg string, fillers []string) string {
	if h.rng.Float64() < h.o.Persona.Verbosity/3 {
		msg = pick(h.rng, fillers) + " " + msg
	}
	if h.rng.Float64() < h.o.Persona.TypoRate {
		msg = typo(h.rng, msg)
	}
	return msg
}

// typo misspells one word of four or more letters. Digits and punctuation
// are never touched, so numbers survive.
func typo(rng *rand.Rand, msg string) string {
	return typos.Misspell(rng, msg, func(w string) bool { return len(w) >= 4 && typos.Letters(w) })
}
