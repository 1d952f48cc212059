// Package userledger is the learned user simulator's own ledger, the part
// of the task contract by which a task shows its simulator the fact a turn
// asked about: after an agent turn that asks for something the user holds
// (mathchat's withheld number, support's id or new value, docedit's next
// change to the document), a note to the simulator alone stating it
// exactly ("Asked about: The order is O-412."). A task offers the notes
// with a method UserNotes returning Notes(its reader), found by
// chatlm.UserNotesOf; the task option ":userledger" turns them on.
//
// Why: the embedded simulators (about a million parameters) are
// conditioned on an oracle context that holds every fact, and they copy
// from it badly: mathchat's stopped finding the asked number past four
// hidden ones, support's states "A-912" for A-921. With the note they copy
// one fact from the line before their reply. The note is the oracle's
// truth, not the conversation's, so it goes to the simulator alone: never
// the agent, the scripted users or the logs' text.
//
// One definition for every task: the note's words, that notes follow agent
// turns only, and that only hidden facts get one, live here; a task
// supplies only its reading of which fact a turn asks about (Asked), as
// its own users read it, so the note names the fact the human proxy would
// give for the same turn.
package userledger

import (
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// Prefix opens every note.
const Prefix = "Asked about:"

// Asked reads the last message of msgs, an agent turn, as the task's users
// read it and returns the fact the user holds that it asks about; ok is
// false when it asks about none (or about several, or is not a question).
// Notes calls it only when the last message is an agent turn.
type Asked func(o *dialog.Oracle, msgs []dialog.Message) (f dialog.Fact, ok bool)

// Notes is the notes function a task's UserNotes returns
// (chatlm.UserNotesOf): after an agent turn that asks about a hidden fact,
// Prefix and the fact's Text ("Asked about: One pen costs 4 dollars.");
// after any other message, after a turn about a fact the opening gives,
// and with no conversation, "".
func Notes(asked Asked) func(o *dialog.Oracle, msgs []dialog.Message) string {
	return func(o *dialog.Oracle, msgs []dialog.Message) string {
		n := len(msgs)
		if n == 0 || msgs[n-1].Role != dialog.RoleAssistant {
			return ""
		}
		f, ok := asked(o, msgs)
		if !ok || !f.Hidden || f.Text == "" {
			return ""
		}
		return Prefix + " " + f.Text
	}
}

// Copies measures how exactly a user copies the facts it holds: over the
// agent turns of one conversation that ask about a hidden fact (those
// Notes would note), asked counts the ones the user replied to and exact
// the replies that state the fact's Value verbatim. exact/asked is the
// user's copy accuracy on the conversation; the human proxy's own is
// below 1 (it answers partly, asks back, misreads an id), so a
// simulator's is read beside the human proxy's on the same agent.
func Copies(asked Asked, o *dialog.Oracle, msgs []dialog.Message) (n, exact int) {
	for i := 0; i+1 < len(msgs); i++ {
		if msgs[i].Role != dialog.RoleAssistant {
			continue
		}
		f, ok := asked(o, msgs[:i+1])
		if !ok || !f.Hidden || f.Value == "" {
			continue
		}
		reply := nextUser(msgs[i+1:])
		if reply == nil {
			continue
		}
		n++
		if strings.Contains(reply.Content, f.Value) {
			exact++
		}
	}
	return n, exact
}

// nextUser is the first user message of msgs (environment notes may come
// between an agent turn and the reply), or nil.
func nextUser(msgs []dialog.Message) *dialog.Message {
	for i := range msgs {
		switch msgs[i].Role {
		case dialog.RoleUser:
			return &msgs[i]
		case dialog.RoleAssistant:
			return nil
		}
	}
	return nil
}
