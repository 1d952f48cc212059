package mathchat

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// profiles describes the scripted agents. They read the problem with the
// generator's grammar (never the oracle); on GSM8K-format data they work
// it from the tutor's book instead (tutor.go: the data's worked solutions
// with the problem's figures blanked, given by Task.Agent). On text
// neither knows they ask for the problem again and then give up with a
// stated guess.
var profiles = map[string]string{
	"careful":       "asks for each missing number, shows its working, answers \"The answer is N.\"; re-asks what it was told if the answer is rejected",
	"guesser":       "answers at once from what it sees, guessing any missing number; guesses again when told it is wrong",
	"sloppy":        "asks like careful, but its first answer has an arithmetic slip at SlipRate; redoes the sum when told it is wrong",
	"answer-seeker": "asks the user for the answer and repeats what it is told; otherwise guesses like guesser",
	"vague":         "like careful, but on about a third of its turns asks an unclear question or one about a number it already has",
}

// vagueRate is the share of the vague profile's turns that are unclear.
const vagueRate = 0.35

// vagueAsks are questions too unclear to be about any one fact.
var vagueAsks = []string{"Can you tell me more about the problem?", "What are the numbers?", "Could you explain that again?", "How many?", "What do you mean?"}

// profileNames lists the profiles in order.
func profileNames() []string { return slices.Sorted(maps.Keys(profiles)) }

// Scripted is a scripted reference agent. Its conversations with the
// human proxy are the logged "human interaction data" later stages learn
// from, so its messages keep to a small, regular style.
type Scripted struct {
	profile  string
	slipRate float64
	// book, when set, is the tutor's book of the task's GSM8K data: the
	// scripted agents' privileged channel, which no learned policy has.
	book *tutorBook
	// terse answers "The answer is N." without the working: the task's
	// ledger works the sum out in its note (Ledger), so the logs a policy
	// is cloned from do not teach it to copy numbers into steps.
	terse bool
}

// NewScripted builds the agent for a profile (see Task.Profiles).
func NewScripted(profile string, slipRate float64) (*Scripted, error) {
	if _, ok := profiles[profile]; !ok {
		return nil, fmt.Errorf("mathchat: unknown agent profile %q (known: %s)", profile, strings.Join(profileNames(), ", "))
	}
	if slipRate < 0 || slipRate > 1 {
		return nil, fmt.Errorf("mathchat: slip rate %g not in [0,1]", slipRate)
	}
	return &Scripted{profile: profile, slipRate: slipRate}, nil
}

// NewSession starts one episode. The view is not needed: the problem
// arrives in the user's first message.
func (a *Scripted) NewSession(_ *dialog.View, rng *rand.Rand) dialog.AgentSession {
	l, _ := grammar() // compiled by New before any agent exists
	return &scriptedSession{profile: a.profile, slipRate: a.slipRate, rng: rng, l: l, book: a.book, terse: a.terse}
}

type scriptedSession struct {
	profile  string
	slipRate float64
	rng      *rand.Rand
	l        *language

	p        *problem
	learned  []*stmt // statements whose number came from a reply
	pending  *stmt   // the statement last asked about
	reasked  bool
	answered bool // the last message was an answer
	slipped  bool
	sought   bool // answer-seeker asked for the answer
	reread   bool // asked the user to restate the problem

	book   *tutorBook   // nil unless the task holds GSM8K data
	booked *bookSession // the problem was found in the book
	terse  bool         // Scripted.terse
}

// Act returns the agent's next message.
func (s *scriptedSession) Act(_ context.Context, history []dialog.Message) (string, error) {
	if len(history) == 0 {
		return "", fmt.Errorf("mathchat: agent called with an empty conversation")
	}
	// The user's last message: the environment's note after it (Ledger)
	// is not the user's, and the scripted agents keep their own books.
	last := history[len(history)-1].Content
	for i := len(history) - 1; i > 0 && dialog.IsNote(history[i]); i-- {
		last = history[i-1].Content
	}
	if s.booked != nil {
		return s.booked.act(last, false), nil
	}
	if s.book != nil && s.p == nil {
		// GSM8K data: the opening is looked up in the book first, so a
		// sentence the grammar happens to read cannot mislead the agent.
		if m, vals := s.book.read(last); m != nil {
			s.booked = newBookSession(s.profile, s.slipRate, s.rng, m, vals)
			return s.booked.act(last, true), nil
		}
	}
	if s.p == nil || s.p.question == nil {
		s.p = s.l.read(last)
		if s.p.question == nil {
			if !s.reread {
				s.reread = true
				return "Sorry, I don't understand the problem. Could you write it out again?", nil
			}
			return "I can't work this one out. My best guess: the answer is 10.", nil
		}
	} else {
		s.absorb(last)
	}
	rejected := s.answered
	s.answered = false
	switch s.profile {
	case "guesser":
		return s.guess(rejected), nil
	case "answer-seeker":
		if !s.sought {
			s.sought = true
			return pick(s.rng, []string{"What is the answer to your problem?", "Do you know the answer? Just tell me the result."}), nil
		}
		if a, ok := ExtractAnswer(last); ok && !rejected {
			s.answered = true
			return "The answer is " + a.Text + ".", nil
		}
		return s.guess(rejected), nil
	}
	if s.profile == "vague" && !rejected && s.rng.Float64() < vagueRate {
		// Half the time ask about a number it was given, which a person
		// answers with some impatience; otherwise be unclear. The next
		// reply answers this, not an earlier question.
		s.pending, s.reasked = nil, false
		var given []*stmt
		for _, st := range s.p.stmts {
			if st.val != nil && !st.pat.distract && st.pat.ask != "" {
				given = append(given, st)
			}
		}
		if len(given) > 0 && s.rng.IntN(2) == 0 {
			return given[s.rng.IntN(len(given))].ask(), nil
		}
		return pick(s.rng, vagueAsks), nil
	}
	return s.careful(rejected), nil
}

// absorb takes numbers from the user's reply: any sentence of the grammar
// that fills a withheld statement, else the number of a reply to the last
// question when every number in it agrees ("4", "I think it was 4, let me
// check... yes, 4").
func (s *scriptedSession) absorb(msg string) {
	s.l.take(s.p, s.pending, msg, s.fill)
}

// take is how a reader of the conversation takes numbers from a user's
// reply to p (the scripted agents, the ledger): every sentence of the
// grammar with its number fills the withheld statement it names; then,
// when the statement asked about (asked; nil for none) is still withheld
// and every number of the reply agrees, that number fills it.
func (l *language) take(p *problem, asked *stmt, msg string, fill func(*stmt, *big.Rat)) {
	for _, sent := range splitSentences(msg) {
		st, ok := l.readSentence(sent)
		if !ok || st.val == nil {
			continue
		}
		for _, u := range p.unknown() {
			if u.key() == st.key() {
				fill(u, st.val)
			}
		}
	}
	if asked == nil || asked.val != nil {
		return
	}
	ns := Numbers(msg)
	if len(ns) == 0 {
		return
	}
	for _, n := range ns[1:] {
		if n.Value.Cmp(ns[0].Value) != 0 {
			return
		}
	}
	fill(asked, ns[0].Value)
}

func (s *scriptedSession) fill(st *stmt, v *big.Rat) {
	st.val = v
	s.learned = append(s.learned, st)
	if st == s.pending {
		s.pending, s.reasked = nil, false
	}
}

// careful asks for each withheld number in turn, then answers with its
// working; the sloppy profile slips on its first answer.
func (s *scriptedSession) careful(rejected bool) string {
	if rejected {
		if s.profile == "sloppy" && s.slipped {
			s.slipped = false
			return "Sorry, I made a mistake. Let me redo it. " + s.answer(false)
		}
		// The numbers it was told are the likeliest culprits: ask again.
		for _, st := range s.learned {
			st.val = nil
		}
		s.learned = nil
	}
	if s.pending != nil && s.pending.val == nil {
		if !s.reasked {
			s.reasked = true
			return "I mean: " + lowerFirst(s.pending.ask())
		}
		s.reasked = false
		return s.pending.ask()
	}
	if u := s.p.unknown(); len(u) > 0 {
		s.pending = u[0]
		prefix := ""
		if len(s.learned) > 0 {
			prefix = pick(s.rng, []string{"Thanks. ", "Got it. ", ""})
		}
		return prefix + u[0].ask()
	}
	slip := s.profile == "sloppy" && !s.slipped && s.rng.Float64() < s.slipRate
	s.slipped = slip
	return s.answer(slip)
}

// guess answers at once, filling each withheld number with a fresh
// guess. Like a person it redraws guesses that make the answer negative.
func (s *scriptedSession) guess(rejected bool) string {
	unknown := s.p.unknown()
	for try := 0; try < 10; try++ {
		for _, u := range unknown {
			u.val = s.guessFor(u)
		}
		if v, err := s.l.solve(s.p, &calc{slipAt: -1}); err == nil && v.Sign() >= 0 {
			break
		}
	}
	msg := s.answer(false)
	for _, u := range unknown {
		u.val = nil
	}
	if rejected {
		msg = "Let me try again. " + msg
	}
	return msg
}

// guessFor draws a plausible number for a statement of its kind.
func (s *scriptedSession) guessFor(st *stmt) *big.Rat {
	switch st.pat.num {
	case numPercent:
		return big.NewRat(int64(10*(1+s.rng.IntN(5))), 1)
	case numFrac:
		return big.NewRat(1, int64(2+s.rng.IntN(3)))
	}
	return big.NewRat(int64(2+s.rng.IntN(9)), 1)
}

// answer solves the problem and writes the working and the answer. With
// slip, one step's result is off by 1 to 3 and later steps carry it; a
// slip that leaves the answer unchanged (on a remainder nobody asked for)
// is redrawn.
func (s *scriptedSession) answer(slip bool) string {
	s.answered = true
	c := &calc{slipAt: -1}
	v, err := s.l.solve(s.p, c)
	if err != nil {
		return "I could not finish the sum. My best guess: the answer is 10."
	}
	for try := 0; slip && try < 8 && len(c.steps) > 0; try++ {
		by := int64(1 + s.rng.IntN(3))
		if s.rng.IntN(2) == 0 {
			by = -by
		}
		sc := &calc{slipAt: s.rng.IntN(len(c.steps)), slipBy: big.NewRat(by, 1)}
		if sv, err := s.l.solve(s.p, sc); err == nil && sv.Cmp(v) != 0 {
			v, c = sv, sc
			break
		}
	}
	var b strings.Builder
	if !s.terse {
		for _, st := range c.steps {
			b.WriteString(st + ". ")
		}
	}
	b.WriteString("The answer is " + FormatRat(v) + ".")
	return b.String()
}
