package support

import (
	"slices"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/userledger"
)

// UserNotes returns the simulator's own ledger when Config.UserLedger is
// on, else nil (chatlm.UserNotesOf): after an agent turn that asks for an
// id or a new value the user holds, a note to the learned simulator alone
// stating it exactly ("Asked about: The order is O-412."), the fact the
// human proxy would give for that turn (Asked).
//
// Why: the quick simulator, reading every id from the oracle context,
// states "A-912" for A-921, and agents that copy what it says then act on
// rows that are not the user's: it succeeds with the base 0.114 where the
// human proxy does 0.354.
func (t *Task) UserNotes() func(o *dialog.Oracle, msgs []dialog.Message) string {
	if !t.cfg.UserLedger {
		return nil
	}
	return userledger.Notes(t.Asked)
}

// Asked returns the fact the last agent turn of msgs asks for, as the
// human proxy reads it (userledger.Asked): the turn's cue word (readTurn:
// the account, an order, a booking, a date, an email) and the fact the
// desk picks for it (desk.fact: the first open goal's not yet told, the
// last told when all are), with the desk replayed over the conversation
// as both scripted users keep it: each agent turn's calls run (or the
// change of mind it is due for), and a fact told once a user message
// states its value. ok is false for a turn that asks for nothing, or for
// what the user does not hold.
func (t *Task) Asked(o *dialog.Oracle, msgs []dialog.Message) (dialog.Fact, bool) {
	n := len(msgs)
	if n == 0 || msgs[n-1].Role != dialog.RoleAssistant {
		return dialog.Fact{}, false
	}
	r := readTurn(msgs[n-1].Content)
	if r.ask == "" {
		return dialog.Fact{}, false
	}
	if _, err := planOf(o); err != nil {
		return dialog.Fact{}, false
	}
	k := newDesk(t.d, o)
	opening := true
	for _, m := range msgs {
		switch m.Role {
		case dialog.RoleUser:
			for _, f := range o.Facts {
				if f.Value != "" && strings.Contains(m.Content, f.Value) {
					k.told[f.Key] = true
				}
			}
			if opening && k.told["account"] {
				// An opening that gives the account (the naive user's
				// over-sharing) gives the final goal: no change of mind.
				k.switched = true
			}
			opening = false
		case dialog.RoleAssistant:
			r := readTurn(m.Content)
			if k.dueToSwitch(r) {
				k.switched = true
			} else {
				k.act(r)
			}
		}
	}
	return k.fact(r.ask)
}

// StatedIDs counts the ids (accounts, orders, bookings: "O-412") the user
// states in msgs and how many of them are ids the user holds (o's facts):
// a user that copies its ids faithfully states only its own, while one
// that misreads them ("A-912" for A-921) states ids of no one's. The human
// proxy now and then swaps two digits of an order or booking id on
// purpose (misread), so its own rate is just below 1.
func StatedIDs(o *dialog.Oracle, msgs []dialog.Message) (stated, held int) {
	own := map[string]bool{}
	for _, f := range o.Facts {
		own[f.Value] = true
	}
	for _, m := range msgs {
		if m.Role != dialog.RoleUser {
			continue
		}
		for _, id := range idRE.FindAllString(m.Content, -1) {
			stated++
			if own[id] {
				held++
			}
		}
	}
	return stated, held
}

// SimCopy is the copy a run that asks for one (reproduce --sim-copy,
// learned+copy:DIR) holds support's calibrated simulator to: whole
// values. Its facts are ids, dates and emails; copying their numbers
// alone still let the quick simulators state another domain
// ("omar84@inbox.org" for "@mail.com") or a date without its month
// ("2026-19"), and left their base success 0.10–0.25 below the human
// proxy's on three pipelines.
func (t *Task) SimCopy() dialog.Copy { return dialog.CopyValues }

// ValueWords are the words support's values begin with that hold no digit
// or '@': the names its emails begin with ("lena82@post.net"). The quick
// simulators begin a held email with another name ("The new email is
// yuki"), which copying the digits and the domain cannot mend; held to
// these words, a name it states begins a held email.
func (t *Task) ValueWords() []string { return slices.Clone(firstNames) }
