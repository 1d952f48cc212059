package support

import (
	"regexp"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// msgAskGoal is how an agent asks the user to spell the change out, ids
// and all: the request the naive simulator's leakage answers.
const msgAskGoal = "Tell me exactly what to change, with every id."

// askGoalCues mark a request for the whole goal.
var askGoalCues = []string{"exactly what", "what exactly", "every id", "spell it out"}

// claimCues mark an agent saying a change is made.
var claimCues = []string{"done", "cancelled", "changed", "updated", "moved"}

// turnRead is what a user takes from an agent turn.
type turnRead struct {
	calls []call
	// ask is the cue of the fact asked for: "account", "order",
	// "booking", "date", "email", or "" for none.
	ask     string
	askGoal bool
	// claim is set when the turn, with no action in it, says a change is
	// made.
	claim bool
}

var wordRE = regexp.MustCompile(`[a-z]+`)

// readTurn reads an agent turn: its calls, and in its words (calls and
// results cut out) the fact it asks about. A new value's cue ("date",
// "email") wins over a row's, and a row's over the account's, so "What is
// the new date for booking B-12?" asks for the date.
func readTurn(turn string) turnRead {
	r := turnRead{calls: parseCalls(turn)}
	words := strings.ToLower(withoutCalls(turn))
	has := map[string]bool{}
	for _, w := range wordRE.FindAllString(words, -1) {
		has[w] = true
	}
	for _, cue := range []string{"date", "email", "order", "booking", "account"} {
		if has[cue] && strings.Contains(words, "?") {
			r.ask = cue
			break
		}
	}
	r.askGoal = hasAny(words, askGoalCues)
	acted := false
	for _, c := range r.calls {
		acted = acted || c.action()
	}
	r.claim = !acted && r.ask == "" && !r.askGoal && hasAny(words, claimCues)
	return r
}

func hasAny(s string, cues []string) bool {
	for _, c := range cues {
		if strings.Contains(s, c) {
			return true
		}
	}
	return false
}

// lastAgent is the last agent turn of history ("" for none).
func lastAgent(history []dialog.Message) string {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == dialog.RoleAssistant {
			return history[i].Content
		}
	}
	return ""
}

// desk is what both scripted users keep of a conversation: the plan, the
// database as the agent's calls have changed it, the goals met, the facts
// told, and whether the user has changed their mind yet.
type desk struct {
	d        db
	o        *dialog.Oracle
	p        plan
	s        state
	met      []bool
	told     map[string]bool
	switched bool // the mind change is behind (or there is none)
}

func newDesk(d db, o *dialog.Oracle) *desk {
	p, _ := planOf(o) // an oracle of this task always has its plan
	return &desk{d: d, o: o, p: p, s: state{}, met: make([]bool, len(p.Goals)), told: map[string]bool{}, switched: p.Dropped == nil}
}

// act runs the turn's actions: right counts the calls that met a goal
// still open, wrong the others (another row, another value, a goal
// dropped, an error).
func (k *desk) act(r turnRead) (right, wrong int) {
	for _, c := range r.calls {
		_, ok := k.d.exec(k.s, c)
		if !c.action() {
			continue
		}
		hit := false
		for i, g := range k.p.Goals {
			if ok && !k.met[i] && k.switched && g.met(c) {
				k.met[i], hit = true, true
				break
			}
		}
		if hit {
			right++
		} else {
			wrong++
		}
	}
	return right, wrong
}

// allMet reports every goal met.
func (k *desk) allMet() bool {
	for _, m := range k.met {
		if !m {
			return false
		}
	}
	return true
}

// fact returns the fact the cue asks for: the account, or the order,
// booking, date or email of the first open goal that has one not yet told
// (the one told last when all are told). ok is false when no goal has
// such a fact.
func (k *desk) fact(cue string) (f dialog.Fact, ok bool) {
	var last dialog.Fact
	for _, x := range k.o.Facts {
		if !strings.HasPrefix(x.Key, cue) {
			continue
		}
		if n := x.Key[len(cue):]; n != "" { // "order2": goal 2's (MaxGoals < 10)
			if i := int(n[0] - '1'); i >= 0 && i < len(k.met) && k.met[i] {
				continue
			}
		}
		if !k.told[x.Key] {
			return x, true
		}
		last, ok = x, true
	}
	return last, ok
}

// switchMessage is the user's change of mind: the first goal is no
// longer the one they opened with.
func (k *desk) switchMessage() string {
	k.switched = true
	return "Actually, I changed my mind. I want to " + phrase(k.p.Goals[0].Kind, 1) + " instead."
}

// dueToSwitch reports that the user changes their mind now: they have
// given their account id and the agent has not acted this turn.
func (k *desk) dueToSwitch(r turnRead) bool {
	if k.switched || !k.told["account"] {
		return false
	}
	for _, c := range r.calls {
		if c.action() {
			return false
		}
	}
	return true
}
