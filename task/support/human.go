package support

import (
	"context"
	"math/rand/v2"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	typos "github.com/calibrl/calibrl/typo"
)

// Human is the human proxy: the held-out stand-in for a real person at a
// support desk (docs/DESIGN.md, "The human proxy"). Its behaviour comes
// from the oracle's persona and the session's rng:
//
//   - it opens with what it wants in its vague form ("I want to cancel an
//     order."), no id in it, framed in one of several ways;
//   - it gives an id or a new value only when the agent's words ask for it
//     (a question naming the account, the order, the booking, the date or
//     the email). With chance Clarity the answer is the whole sentence;
//     otherwise it is partial (the id alone, hedged), or, once per fact,
//     a question back ("Which one do you mean?") or an order or booking id
//     with two digits swapped, which it corrects when the agent says the
//     id is not on the account;
//   - a user who changes their mind does so once, in the first reply
//     after giving the account id, unless the agent has just acted;
//   - every action the agent runs is checked against the goals: the right
//     change is thanked, a wrong one (another row, another value, an
//     error) rejected, as often as it comes; when every goal is met it
//     ends the episode (dialog.Solved);
//   - a change claimed without a call is rejected; asked to spell the
//     whole change out, it says what it wants in words, never the ids;
//   - unhelpful turns (confusing, wrong actions, claims, asking for what
//     it already said or for the whole change) each cost one unit of
//     Patience; at zero it gives up (dialog.GaveUp);
//   - each message carries a typo with chance TypoRate (letters only,
//     never in an id or a keyword) and a filler with chance Verbosity.
type Human struct{ d db }

// NewSession starts one episode's human proxy.
func (h *Human) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	return &humanSession{desk: newDesk(h.d, o), rng: rng, patience: max(1, o.Persona.Patience), askedBack: map[string]bool{}, misstated: map[string]bool{}}
}

type humanSession struct {
	*desk
	rng       *rand.Rand
	patience  int
	askedBack map[string]bool
	misstated map[string]bool // row ids first given with two digits swapped
	rejected  int
	end       dialog.EndReason
}

// EndReason says why the session ended ("" while it goes on).
func (h *humanSession) EndReason() dialog.EndReason { return h.end }

var (
	humanOpenings = []string{"Hi, %s", "Hello. %s", "%s Can you help me?", "Hi! %s I have my ids with me if you need them."}
	humanFillers  = []string{"Okay.", "Hmm.", "Well."}
	humanReveal   = []string{"%s", "Sure. %s", "Let me check. %s"}
	humanPartial  = []string{"%s.", "It's %s.", "I think it's %s."}
	humanBack     = []string{"Which one do you mean?", "Which id do you mean?", "What do you mean exactly?"}
	humanConfuse  = []string{"I'm not sure what you mean.", "Sorry, I don't follow.", "What do you mean? I just want this sorted out."}
	humanNoGoal   = []string{"I told you, I want to %s.", "Like I said, I want to %s."}
	humanAgain    = []string{"I already told you. %s", "I said that already. %s"}
	humanNotMine  = []string{"I don't have anything like that to change.", "That's not part of what I asked for."}
	humanWrong    = []string{"No, that's not what I asked for.", "That's the wrong one, that's not what I wanted.", "No, that's not it."}
	humanClaim    = []string{"It is not done, I don't see any change. Try again.", "I don't think you changed anything. Try again."}
	humanThanks   = []string{"Thanks.", "Good, thanks."}
	humanRight    = []string{"Great, that's all I needed. Thanks!", "Perfect, that's everything. Thank you!", "Yes, that's right, thanks for the help!"}
	humanGiveUp   = []string{"This is taking too long. Bye.", "Never mind, I'll call again later.", "I don't think this is working. I'll ask someone else."}
)

func pick(rng *rand.Rand, xs []string) string { return xs[rng.IntN(len(xs))] }

// Open says what the user wants, without ids.
func (h *humanSession) Open(context.Context) (string, error) {
	msg := strings.Replace(pick(h.rng, humanOpenings), "%s", h.o.Opening, 1)
	if h.rng.Float64() < h.o.Persona.Verbosity/2 {
		msg += " It's a bit urgent."
	}
	return msg, nil
}

// Reply answers the agent's last message.
func (h *humanSession) Reply(_ context.Context, history []dialog.Message) (string, bool, error) {
	r := readTurn(lastAgent(history))
	if h.dueToSwitch(r) {
		return h.noisy(h.switchMessage(), humanFillers), false, nil
	}
	right, wrong := h.act(r)
	var msg string
	cost := 1
	switch {
	case wrong > 0:
		h.rejected++
		msg = pick(h.rng, humanWrong)
	case right > 0 && h.allMet():
		h.end = dialog.Solved
		return h.noisy(pick(h.rng, humanRight), humanFillers), true, nil
	case r.ask != "":
		msg, cost = h.answer(r.ask)
		if right > 0 {
			msg, cost = pick(h.rng, humanThanks)+" "+msg, 0
		}
	case right > 0:
		msg, cost = pick(h.rng, humanThanks), 0
	case r.askGoal:
		msg = strings.Replace(pick(h.rng, humanNoGoal), "%s", request(h.p.Goals), 1)
	case r.claim:
		msg = pick(h.rng, humanClaim)
	default:
		msg = pick(h.rng, humanConfuse)
	}
	h.patience -= cost
	if h.patience <= 0 {
		h.end = dialog.GaveUp
		return h.noisy(pick(h.rng, humanGiveUp), humanFillers), true, nil
	}
	return h.noisy(msg, humanFillers), false, nil
}

// answer answers a question about the fact cue names, and says what it
// costs the user's patience: nothing for a fact not yet told.
func (h *humanSession) answer(cue string) (string, int) {
	f, ok := h.fact(cue)
	switch {
	case !ok:
		return pick(h.rng, humanNotMine), 1
	case h.told[f.Key]:
		return strings.Replace(pick(h.rng, humanAgain), "%s", f.Text, 1), 1
	}
	sorry := ""
	if h.misstated[f.Key] {
		sorry = "Sorry, my mistake. "
	}
	if h.rng.Float64() < h.o.Persona.Clarity {
		h.told[f.Key] = true
		return sorry + strings.Replace(pick(h.rng, humanReveal), "%s", f.Text, 1), 0
	}
	if wrong, ok := misread(f); ok && !h.misstated[f.Key] && h.rng.IntN(3) == 0 {
		// A person reads an id off a receipt and swaps two digits: the
		// id is not theirs, and they correct it when told so.
		h.misstated[f.Key] = true
		return strings.ReplaceAll(pick(h.rng, humanPartial), "%s", wrong), 0
	}
	if !h.askedBack[f.Key] && h.rng.IntN(2) == 0 {
		h.askedBack[f.Key] = true
		return pick(h.rng, humanBack), 0
	}
	h.told[f.Key] = true
	return sorry + strings.ReplaceAll(pick(h.rng, humanPartial), "%s", f.Value), 0
}

// misread is a row id with its last two differing adjacent digits
// swapped; ok is false for the account, a value, or an id with no two
// adjacent digits that differ.
func misread(f dialog.Fact) (string, bool) {
	if !strings.HasPrefix(f.Key, "order") && !strings.HasPrefix(f.Key, "booking") {
		return "", false
	}
	b := []byte(f.Value)
	for i := len(b) - 1; i > 2; i-- {
		if b[i] != b[i-1] {
			b[i], b[i-1] = b[i-1], b[i]
			return string(b), true
		}
	}
	return "", false
}

// keywords are the words a typo never touches, as mathchat's never
// touch digits: the words that name what is wanted and what is asked
// for, which the task's readers go by.
var keywords = map[string]bool{"order": true, "orders": true, "booking": true, "bookings": true, "date": true,
	"email": true, "account": true, "cancel": true, "change": true, "update": true, "instead": true}

// noisy adds the persona's filler and typos to a message.
func (h *humanSession) noisy(msg string, fillers []string) string {
	if h.rng.Float64() < h.o.Persona.Verbosity/3 {
		msg = pick(h.rng, fillers) + " " + msg
	}
	if h.rng.Float64() < h.o.Persona.TypoRate {
		msg = typos.Misspell(h.rng, msg, func(w string) bool { return len(w) >= 4 && typos.Letters(w) && !keywords[strings.ToLower(w)] })
	}
	return msg
}
