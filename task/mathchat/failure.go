package mathchat

import (
	"slices"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// Failure is one thing that went wrong in a conversation the agent did
// not solve. A failed conversation can show several: the classes say what
// a policy does wrong, so that a report can show which of them RL changes
// (and which it leaves, when the greedy mode does not move).
type Failure string

// The failure classes, in the order a report lists them. Each is read from
// the transcript alone, with the users' own reading of an agent message
// (readAgent), so a class means the same against every user.
const (
	// NeverAsks: the agent answered without asking about any hidden fact.
	NeverAsks Failure = "never asks"
	// AnswersEarly: its first answer came before every hidden fact was
	// told (and it had asked about at least one).
	AnswersEarly Failure = "answers before all facts"
	// AsksTold: it asked about a number the problem gave or the user had
	// already told.
	AsksTold Failure = "asks for what it was told"
	// RepeatsRejected: it gave again an answer the user had rejected.
	RepeatsRejected Failure = "repeats after a rejection"
	// Miscopies: every hidden fact was told before its final answer, and
	// that answer is wrong: the numbers were there, the working was not.
	Miscopies Failure = "miscopies"
	// NoAnswer: it never stated an answer.
	NoAnswer Failure = "no answer"
	// GivesUp: the user's patience ran out (dialog.GaveUp).
	GivesUp Failure = "user gives up"
	// TurnLimit: the conversation hit the turn limit (dialog.MaxTurns).
	TurnLimit Failure = "turn limit"
)

// Failures lists the classes in report order.
var Failures = []Failure{NeverAsks, AnswersEarly, AsksTold, RepeatsRejected, Miscopies, NoAnswer, GivesUp, TurnLimit}

// ClassifyFailure returns the failure classes of a finished conversation
// (nil when it succeeded). A hidden fact counts as told once a user
// message after a question about it carries its value: a partial reveal
// ("It was 4.") tells it, a question back does not.
func ClassifyFailure(ep *dialog.Episode) []Failure {
	if ep.Success {
		return nil
	}
	facts := ep.Oracle.Facts
	var hidden int
	for _, f := range facts {
		if f.Hidden {
			hidden++
		}
	}
	told := map[int]bool{}  // hidden facts told so far
	asked := map[int]bool{} // hidden facts asked about so far
	pending := -1           // the hidden fact the last question asked about
	var answers []string    // answers given so far, as stated
	var out []Failure
	add := func(f Failure) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	firstAnswer, lastAnswerTold := true, false
	for _, m := range ep.Messages {
		switch m.Role {
		case dialog.RoleUser:
			if pending >= 0 && carries(m.Content, facts[pending].Value) {
				told[pending] = true
			}
			pending = -1
		case dialog.RoleAssistant:
			r := readAgent(m.Content, facts)
			switch r.kind {
			case intentAnswer:
				if firstAnswer {
					firstAnswer = false
					switch {
					case hidden > 0 && len(asked) == 0:
						add(NeverAsks)
					case len(told) < hidden:
						add(AnswersEarly)
					}
				}
				stated := r.answer.Text
				if r.answer.Value != nil {
					stated = r.answer.Value.RatString()
				}
				if slices.Contains(answers, stated) {
					add(RepeatsRejected)
				}
				answers = append(answers, stated)
				lastAnswerTold = len(told) == hidden
			case intentAskFact:
				f := facts[r.fact]
				if !f.Hidden || told[r.fact] {
					add(AsksTold)
				}
				if f.Hidden {
					asked[r.fact] = true
					pending = r.fact
				}
			}
		}
	}
	if len(answers) == 0 {
		add(NoAnswer)
	} else if lastAnswerTold {
		add(Miscopies)
	}
	switch ep.End {
	case dialog.GaveUp:
		add(GivesUp)
	case dialog.MaxTurns:
		add(TurnLimit)
	}
	slices.SortFunc(out, func(a, b Failure) int { return slices.Index(Failures, a) - slices.Index(Failures, b) })
	return out
}

// carries reports whether msg states value as a number of its own (not a
// digit inside another number).
func carries(msg, value string) bool {
	if value == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(msg[i:], value)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(value)
		before := j == 0 || !isNumberByte(msg[j-1])
		after := end == len(msg) || !isNumberByte(msg[end]) || (msg[end] == '.' && (end+1 == len(msg) || !isDigit(msg[end+1])))
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isNumberByte(c byte) bool { return isDigit(c) || c == '.' || c == ',' }

// FailureClasses names the classes ClassifyFailure gives, in report order
// (the report's columns).
func (t *Task) FailureClasses() []string {
	out := make([]string, len(Failures))
	for i, f := range Failures {
		out[i] = string(f)
	}
	return out
}

// FailuresOf is ClassifyFailure's classes as names, for readers that know
// the task only through its interface.
func (t *Task) FailuresOf(ep *dialog.Episode) []string {
	var out []string
	for _, f := range ClassifyFailure(ep) {
		out = append(out, string(f))
	}
	return out
}
