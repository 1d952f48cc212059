package mathchat

import (
	"math/big"
	"strconv"

	"github.com/calibrl/calibrl/dialog"
)

// Ledger is the task's bookkeeping environment (dialog.Environment),
// after docedit's, which shows the document as the agent's commands left
// it: after each reply of the user it notes where the conversation has
// left the problem, so an agent need not keep many withheld numbers in
// its head nor carry them into a sum. While numbers are still missing the
// note counts them and names the first, as the question that asks for it
// ("Still missing: 3 numbers. Next: How much does one pen cost?"); once
// the user has told every one it gives the answer they make ("Every
// number told. The answer is 68."). The note follows every reply, not
// only those that told something, so the agent's next turn always has it
// at hand; the scripted agents answer without their working when the
// ledger is on (Scripted.terse).
//
// The ledger keeps what the user said, not what is true: it reads the
// replies as the scripted agents do (language.take: the task's grammar,
// never the oracle). A sentence of the grammar with its number fills the
// withheld statement it names; a reply whose numbers all agree ("4", "I
// think it was 4, let me check... yes, 4") fills the one statement the
// agent's last turn asked about, as the user reads questions (two cue
// words). A simulator that answers with a wrong number is recorded with
// it, and the answer in the note is then wrong too.
//
// What is left to the agent is the dialogue: whether to ask or to answer,
// asking so that the user understands and answers, what to make of a
// question back or a rejected answer, and when to stop. That is the
// interaction the horizon study measures; the ledger is its embedded
// scale's mechanics, as the calculator is the arithmetic's. Measured on
// the quick preset's base (held-out NLL about 0.28; 200 problems at h8,
// greedy), the ledger's earlier forms were not enough:
//
//   - a note of every missing number, as the opening worded them, and
//     at the end the whole problem: 0.000 success. The base asked for
//     the count of an item the opening gave ("How many shells does Finn
//     buy?" after "Still missing: The shells cost some money each.")
//     and, with no new note after a reply that told nothing, asked it
//     again until the user gave up;
//   - the same with the working laid out in the last note: 0.000. In
//     68 of 200 conversations it reached that note, but it could not
//     copy the steps' numbers from it ("9 × 2 = 18. 2 × 1 = 2." after
//     "Working: 9 × 2 = 18. 8 × 1 = 8.").
//
// As it is, a base cloned from its logs solves 0.800 at h8 and 0.580 at
// h16, greedy (docs/DESIGN.md).
type Ledger struct{ l *language }

// Notes of the ledger.
const (
	ledgerMissing = "Still missing:"
	ledgerNext    = "Next:"
	ledgerAll     = "Every number told."
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
	return g.note(p)
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
	if u := p.unknown(); len(u) > 0 {
		count := "1 number."
		if len(u) > 1 {
			count = strconv.Itoa(len(u)) + " numbers."
		}
		return ledgerMissing + " " + count + " " + ledgerNext + " " + u[0].ask()
	}
	v, err := g.l.solve(p, &calc{slipAt: -1})
	if err != nil {
		// No answer with these numbers (a division by zero): the user
		// has told them all, and the rest is the agent's.
		return ledgerAll
	}
	return ledgerAll + " The answer is " + FormatRat(v) + "."
}
