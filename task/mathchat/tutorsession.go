package mathchat

import (
	"math/big"
	"math/rand/v2"
	"strings"
)

// bookSession plays a scripted profile on a problem found in the tutor's
// book (tutor.go): the same characters as on generated problems, with the
// book's method in place of the grammar's solver.
type bookSession struct {
	profile  string
	slipRate float64
	rng      *rand.Rand

	m       *method
	vals    [][]*big.Rat // the problem's numbers as the agent knows them
	learned [][2]int     // (sentence, number) filled from a reply
	pending int          // the sentence last asked about; -1 for none
	reasked bool
	// answered: the last message was an answer; slipped: it carried
	// the sloppy profile's slip; sought: answer-seeker asked.
	answered, slipped, sought bool
}

func newBookSession(profile string, slipRate float64, rng *rand.Rand, m *method, vals [][]*big.Rat) *bookSession {
	return &bookSession{profile: profile, slipRate: slipRate, rng: rng, m: m, vals: vals, pending: -1}
}

// act mirrors scriptedSession.Act for each profile.
func (s *bookSession) act(last string, first bool) string {
	if !first {
		s.absorb(last)
	}
	rejected := s.answered
	s.answered = false
	switch s.profile {
	case "guesser":
		return s.guess(rejected)
	case "answer-seeker":
		if !s.sought {
			s.sought = true
			return pick(s.rng, []string{"What is the answer to your problem?", "Do you know the answer? Just tell me the result."})
		}
		if a, ok := ExtractAnswer(last); ok && !rejected {
			s.answered = true
			return "The answer is " + a.Text + "."
		}
		return s.guess(rejected)
	}
	if s.profile == "vague" && !rejected && s.rng.Float64() < vagueRate {
		s.pending, s.reasked = -1, false
		var given []int
		for i, row := range s.vals {
			if len(row) > 0 && row[0] != nil {
				given = append(given, i)
			}
		}
		if len(given) > 0 && s.rng.IntN(2) == 0 {
			return s.m.sents[given[s.rng.IntN(len(given))]].ask()
		}
		return pick(s.rng, vagueAsks)
	}
	return s.careful(rejected)
}

// unknown lists the sentences with a number the answer needs and the
// agent lacks, in text order.
func (s *bookSession) unknown() []int {
	var out []int
	for i, row := range s.vals {
		for k, v := range row {
			if v == nil && s.m.needed[i][k] {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// absorb fills the pending sentence's numbers from the user's reply. A
// reply that restates the sentence (most of its content words, typos
// aside) gives every number in order; a short one ("4.", "I think it
// was 4, let me check... yes, 4") whose numbers agree gives the first,
// which is what a person answers with when a sentence holds several.
func (s *bookSession) absorb(msg string) {
	if s.pending < 0 {
		return
	}
	ns := Numbers(msg)
	if len(ns) == 0 {
		return
	}
	row := s.vals[s.pending]
	sent := s.m.sents[s.pending]
	cues := contentStems(strings.ReplaceAll(sent.masked, blank, " "))
	have := map[string]bool{}
	for _, w := range wordStems(msg) {
		have[w] = true
	}
	hits := 0
	for _, c := range cues {
		if have[c] {
			hits++
		}
	}
	switch {
	case len(ns) == len(row) && 2*hits >= len(cues):
		for k := range row {
			s.fill(s.pending, k, ns[k].Value)
		}
	default:
		for _, n := range ns[1:] {
			if n.Value.Cmp(ns[0].Value) != 0 {
				return
			}
		}
		for k, v := range row {
			if v == nil {
				s.fill(s.pending, k, ns[0].Value)
				break
			}
		}
	}
	for k, v := range row {
		if v == nil && s.m.needed[s.pending][k] {
			return
		}
	}
	s.pending, s.reasked = -1, false
}

func (s *bookSession) fill(i, k int, v *big.Rat) {
	s.vals[i][k] = v
	s.learned = append(s.learned, [2]int{i, k})
}

// careful asks about each sentence the opening left out, then answers
// with its working; the sloppy profile slips on its first answer.
func (s *bookSession) careful(rejected bool) string {
	if rejected {
		if s.profile == "sloppy" && s.slipped {
			s.slipped = false
			return "Sorry, I made a mistake. Let me redo it. " + s.answer(false)
		}
		// The numbers it was told are the likeliest culprits: ask again.
		for _, ik := range s.learned {
			s.vals[ik[0]][ik[1]] = nil
		}
		s.learned = nil
	}
	if s.pending >= 0 {
		q := s.m.sents[s.pending].ask()
		if !s.reasked {
			s.reasked = true
			return "I mean: " + lowerFirst(q)
		}
		s.reasked = false
		return q
	}
	if u := s.unknown(); len(u) > 0 {
		s.pending = u[0]
		prefix := ""
		if len(s.learned) > 0 {
			prefix = pick(s.rng, []string{"Thanks. ", "Got it. ", ""})
		}
		return prefix + s.m.sents[u[0]].ask()
	}
	slip := s.profile == "sloppy" && !s.slipped && s.rng.Float64() < s.slipRate
	s.slipped = slip
	return s.answer(slip)
}

// guess answers at once, filling each number it lacks with a fresh guess
// and redrawing guesses that make the answer negative.
func (s *bookSession) guess(rejected bool) string {
	var filled [][2]int
	for i, row := range s.vals {
		for k, v := range row {
			if v == nil && s.m.needed[i][k] {
				filled = append(filled, [2]int{i, k})
			}
		}
	}
	for try := 0; try < 10; try++ {
		for _, ik := range filled {
			if s.m.sents[ik[0]].kinds[ik[1]] == "what percent" {
				s.vals[ik[0]][ik[1]] = big.NewRat(int64(10*(1+s.rng.IntN(5))), 1)
			} else {
				s.vals[ik[0]][ik[1]] = big.NewRat(int64(2+s.rng.IntN(9)), 1)
			}
		}
		if vs, err := run(s.m.steps, s.vals, -1, nil); err == nil && vs[len(vs)-1].Sign() >= 0 {
			break
		}
	}
	msg := s.answer(false)
	for _, ik := range filled {
		s.vals[ik[0]][ik[1]] = nil
	}
	if rejected {
		msg = "Let me try again. " + msg
	}
	return msg
}

// answer writes the method's working on the known numbers, one binary
// step a sentence in the calculator's notation ("16 - 3 = 13. 13 - 4 =
// 9."), and the answer. With slip, one step's result is off by 1 to 3
// and later steps carry it; a slip that leaves the answer unchanged is
// redrawn.
func (s *bookSession) answer(slip bool) string {
	s.answered = true
	vs, err := run(s.m.steps, s.vals, -1, nil)
	if err != nil {
		return "I could not finish the sum. My best guess: the answer is 10."
	}
	for try := 0; slip && try < 8; try++ {
		by := int64(1 + s.rng.IntN(3))
		if s.rng.IntN(2) == 0 {
			by = -by
		}
		at := s.rng.IntN(len(s.m.steps))
		if sv, err := run(s.m.steps, s.vals, at, big.NewRat(by, 1)); err == nil && sv[len(sv)-1].Cmp(vs[len(vs)-1]) != 0 {
			vs = sv
			break
		}
	}
	var b strings.Builder
	for i, st := range s.m.steps {
		b.WriteString(FormatRat(s.value(st.a, vs)) + " " + opSymbol[st.op] + " " + FormatRat(s.value(st.b, vs)) + " = " + FormatRat(vs[i]) + ". ")
	}
	b.WriteString("The answer is " + FormatRat(vs[len(vs)-1]) + ".")
	return b.String()
}

// opSymbol writes an annotation's operator in the task's notation.
var opSymbol = map[byte]string{'+': "+", '-': "-", '*': "×", '/': "÷"}

func (s *bookSession) value(o operand, vs []*big.Rat) *big.Rat {
	switch {
	case o.step >= 0:
		return vs[o.step]
	case o.sent >= 0:
		return s.vals[o.sent][o.idx]
	}
	return o.val
}
