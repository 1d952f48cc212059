package mathchat

import (
	"math/big"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// Ledger is the task's bookkeeping environment (dialog.Environment),
// after docedit's, which shows the document as the agent's commands left
// it: after each reply of the user it notes the problem as the
// conversation has left it, so an agent need not keep many withheld
// numbers in its head. While numbers are still missing the note lists
// them as the opening worded them ("Still missing: Tara buys some
// balloons."); once the user has told every one it states the whole
// problem with them ("Every number: Tara buys 6 pencils. ...") and the
// working that solves it, the calculator's steps in the order the
// scripted agents write them ("Working: 6 × 2 = 12. ..."). A note is
// written only when it differs from the ledger's last one, so replies
// that tell nothing add nothing.
//
// The ledger keeps what the user said, not what is true: it reads the
// replies as the scripted agents do (language.take: the task's grammar,
// never the oracle). A sentence of the grammar with its number fills the
// withheld statement it names; a reply whose numbers all agree ("4", "I
// think it was 4, let me check... yes, 4") fills the one statement the
// agent's last turn asked about, as the user reads questions (two cue
// words). A simulator that answers with a wrong number is recorded with
// it.
//
// What is left to the agent is the dialogue: which number to ask for,
// in words the user understands, what to make of a question back, when
// to stop asking and answer. On the horizon levels, where problems
// withhold up to eleven numbers, the embedded base policy could not do
// this bookkeeping over the conversation and re-asked numbers it had
// been told (28% of its turns at h8, with 0.005 success). With the list
// of missing numbers but without the working it still solved none at h8
// (200 problems, greedy): where it had asked for every number it could
// not carry seven of them from the problem into its steps ("9 × 8 = 72.
// 3 × 1 = 3." for 9 marbles at $8 and 2 cards at $3), so the ledger
// lays the steps out, and the agent's answer is theirs to copy. The
// working is what the user said worked out: a wrong number told gives a
// wrong working, and an agent that answers before asking has none.
type Ledger struct{ l *language }

// Notes of the ledger, ahead of the statements they list.
const (
	ledgerMissing = "Still missing:"
	ledgerAll     = "Every number:"
	// ledgerWorking heads the working that follows the full problem.
	ledgerWorking = "Working:"
)

// Respond returns the ledger's note on the last message of history when
// it is a reply of the user's (not the opening), or "".
func (g Ledger) Respond(_ *dialog.View, history []dialog.Message) string {
	n := len(history)
	if n < 2 || history[n-1].Role != dialog.RoleUser {
		return ""
	}
	p := g.replay(history)
	if p == nil {
		return ""
	}
	note := g.note(p)
	for i := n - 1; i >= 0; i-- {
		if m := history[i]; dialog.IsNote(m) && isLedgerNote(m.Content) {
			if m.Content == note {
				return ""
			}
			break
		}
	}
	return note
}

// isLedgerNote reports whether a note is one of the ledger's.
func isLedgerNote(s string) bool {
	return strings.HasPrefix(s, ledgerMissing) || strings.HasPrefix(s, ledgerAll)
}

// replay reads the opening (history's first message, the user's) and
// fills its withheld statements from every later reply; nil when the
// opening is not a problem of the grammar or withholds nothing.
func (g Ledger) replay(history []dialog.Message) *problem {
	if history[0].Role != dialog.RoleUser {
		return nil
	}
	p := g.l.read(history[0].Content)
	if p.question == nil || len(p.unknown()) == 0 {
		return nil
	}
	facts := make([]dialog.Fact, len(p.stmts))
	for i, st := range p.stmts {
		if st.pat.num != numNone {
			facts[i].Cues = st.cues()
		}
	}
	var asked *stmt // the statement the agent's last turn asked about
	for _, m := range history[1:] {
		switch m.Role {
		case dialog.RoleAssistant:
			asked = nil
			if r := readAgent(m.Content, facts); r.kind == intentAskFact {
				asked = p.stmts[r.fact]
			}
		case dialog.RoleUser:
			g.l.take(p, asked, m.Content, func(st *stmt, v *big.Rat) { st.val = v })
		}
	}
	return p
}

// note writes the ledger's note on p.
func (g Ledger) note(p *problem) string {
	var b strings.Builder
	if u := p.unknown(); len(u) > 0 {
		b.WriteString(ledgerMissing)
		for _, st := range u {
			b.WriteString(" " + st.vague)
		}
		return b.String()
	}
	b.WriteString(ledgerAll)
	for _, st := range p.stmts {
		text := st.text // "" for a statement the opening withheld
		if text == "" {
			text = render(st.pat.forms[0], st.slots, st.val, nil)
		}
		b.WriteString(" " + text)
	}
	// The working with those numbers, in the steps the scripted agents
	// write: the calculator's sums laid out in the order they are done.
	c := &calc{slipAt: -1}
	if _, err := g.l.solve(p, c); err == nil && len(c.steps) > 0 {
		b.WriteString(" " + ledgerWorking)
		for _, st := range c.steps {
			b.WriteString(" " + st + ".")
		}
	}
	return b.String()
}
