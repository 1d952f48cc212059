package mathchat

import (
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/userledger"
)

// UserNotes returns the user ledger when Config.UserLedger is on, else
// nil (chatlm.UserNotesOf; the note's rules are package userledger's):
// the simulator's side of the bookkeeping the agent gets from the Ledger. After an agent turn that asks for a
// withheld number it notes the statement asked about, whole and with its
// true number, as the task's grammar words it ("Asked about: One pen
// costs 4 dollars."); after any other turn, nothing.
//
// Why: the learned simulator (about 1M parameters) is conditioned on an
// oracle context that holds the whole problem, and past four hidden
// numbers it no longer finds the one asked for in it. In the learned
// horizon study, the answer the ledger made of the numbers it told the
// base was right in 244/274 conversations at H = 2 and 260/300 at H = 4,
// but 1/195 at H = 8 and 0/84 at H = 16, while the human proxy always
// tells the truth; RL against it then sees almost no reward, and the
// calibrated arm measures the simulator's capacity rather than its
// compounding error. With the note it copies one number from the line
// before its reply.
//
// The note reads the turn as the users do (readAgent on the oracle's
// facts and their cue words), so it names the fact the human proxy would
// reveal for the same turn. A question the reader places on a fact the
// opening gives, or on no single fact, gets no note: the note is for
// withheld numbers only. It is the oracle's truth, not the conversation's,
// so it goes to the simulator alone: never the agent, the scripted users
// or the logs' text (chatlm.UserMessages adds it to the simulator's view).
func (t *Task) UserNotes() func(o *dialog.Oracle, msgs []dialog.Message) string {
	if !t.cfg.UserLedger {
		return nil
	}
	return userledger.Notes(Asked)
}

// Asked returns the fact the last agent turn of msgs asks about, read as
// the users read it (readAgent on the oracle's facts and their cue words;
// userledger.Asked): ok is false for a turn the reader places on no
// single fact. userledger.Notes notes only a hidden one.
func Asked(o *dialog.Oracle, msgs []dialog.Message) (dialog.Fact, bool) {
	n := len(msgs)
	if n == 0 || msgs[n-1].Role != dialog.RoleAssistant {
		return dialog.Fact{}, false
	}
	r := readAgent(msgs[n-1].Content, o.Facts)
	if r.kind != intentAskFact {
		return dialog.Fact{}, false
	}
	return o.Facts[r.fact], true
}
