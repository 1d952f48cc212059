package docedit

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/userledger"
)

// UserNotes returns the simulator's own ledger when Config.UserLedger is
// on, else nil (chatlm.UserNotesOf): after an agent turn that asks what to
// change, or how a new sentence goes on, a note to the learned simulator
// alone stating the change the human proxy would talk about next, in its
// concrete words and numbered in the current document ("Asked about: In
// sentence 2, change "Monday" to "Friday".").
//
// Why: the oracle context lists every change numbered in the draft; after
// the agent's commands the numbers shift, and the simulator must find the
// next change still to do and copy its words exactly from a long context.
// The note gives it the one change, in the document it is looking at.
func (t *Task) UserNotes() func(o *dialog.Oracle, msgs []dialog.Message) string {
	if !t.cfg.UserLedger {
		return nil
	}
	return userledger.Notes(Asked)
}

// Asked returns, as a fact, the change of the user's plan that the last
// agent turn of msgs asks about (userledger.Asked), read as the human
// proxy reads the turn (readTurn) and chosen as it chooses: a turn that
// asks what to change (or how a new sentence goes on) gets the first
// change still to do in the current document that no user message since
// the agent's last revision has stated whole, or, all stated, the first
// still to do; a missing sentence comes in its two halves, the second once
// a user message has given the first, so the note never holds a target
// sentence the draft lacks. The
// fact's Text is the change as the users state it concretely (detail),
// numbered in the current document; its Value the words to copy (the new
// words, the sentence to take out, or the half of a missing sentence;
// "" for a swap). A turn that asks for the whole text, or asks nothing,
// gets none, nor does one when every change is done; a revision that asks
// on gets one, as the human proxy goes on to the next change after it.
func Asked(o *dialog.Oracle, msgs []dialog.Message) (dialog.Fact, bool) {
	n := len(msgs)
	if n == 0 || msgs[n-1].Role != dialog.RoleAssistant {
		return dialog.Fact{}, false
	}
	r := readTurn(o.Draft, msgs)
	if r.askTarget || !(r.askChange || r.askRest) {
		return dialog.Fact{}, false
	}
	// said is what the user has said since the agent's last revision: a
	// change said before it and still not done is said again from its
	// start, as the human proxy does ("You still haven't done this one.").
	doc := Normalize(o.Draft)
	var said []string
	for _, m := range msgs {
		switch m.Role {
		case dialog.RoleUser:
			said = append(said, m.Content)
		case dialog.RoleAssistant:
			r := ApplyTurn(doc, m.Content)
			if doc = r.Doc; r.Delivered {
				said = nil
			}
		}
	}
	cur := SplitSentences(doc)
	told := func(words string) bool {
		for _, s := range said {
			if strings.Contains(s, `"`+words+`"`) {
				return true
			}
		}
		return false
	}
	// part is the half of edit e the users state next: 2 once its first
	// half is said; whole is whether all of it is said.
	part := func(e dialog.Edit) (part int, whole bool) {
		switch e.Kind {
		case KindInsertSentence:
			first, rest := halves(e.To)
			if told(first) {
				return 2, told(rest)
			}
			return 1, false
		case KindSwap:
			return 1, false
		case KindDeleteSentence:
			return 1, told(e.From)
		}
		return 1, told(e.To)
	}
	next := -1
	for i, e := range o.Edits {
		if stateOf(e, cur) != stateOutstanding {
			continue
		}
		if _, whole := part(e); !whole {
			next = i
			break
		}
		if next < 0 {
			next = i
		}
	}
	if next < 0 {
		return dialog.Fact{}, false
	}
	e := o.Edits[next]
	p, _ := part(e)
	f := dialog.Fact{Key: fmt.Sprintf("edit%d", next+1), Hidden: true}
	// The phrase templates' choice is fixed per edit, as describeEdit's.
	f.Text = detail(e, cur, p, rand.New(rand.NewPCG(uint64(len(e.From)), uint64(len(e.To)))))
	switch {
	case e.Kind == KindInsertSentence:
		first, rest := halves(e.To)
		f.Value = first
		if p == 2 {
			f.Key, f.Value = f.Key+"b", rest
		}
	case e.Kind == KindDeleteSentence:
		f.Value = e.From
	case e.Kind != KindSwap:
		f.Value = e.To
	}
	return f, true
}
