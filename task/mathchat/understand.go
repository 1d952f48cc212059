package mathchat

import (
	"regexp"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// What a user makes of an agent's message. Both scripted users read the
// agent the same way and differ only in how they respond.
type intent int

const (
	// intentOther: neither an answer nor a question the user can place;
	// off-topic or unclear.
	intentOther intent = iota
	// intentAnswer: the message states an answer (ExtractAnswer).
	intentAnswer
	// intentAskFact: a question about exactly one fact.
	intentAskFact
	// intentAskUnclear: a question that fits several facts equally.
	intentAskUnclear
	// intentAskAnswer: the agent asks the user for the answer.
	intentAskAnswer
)

// reading is a user's understanding of one agent message.
type reading struct {
	kind   intent
	answer Answer
	fact   int // index into the oracle's Facts for intentAskFact
}

var (
	askAnswerRe = regexp.MustCompile(`(?i)\b(answers?|results?|solutions?)\b|what did you get|what do you get|do you know what it`)
	questionRe  = regexp.MustCompile(`(?i)^\s*(how|what|which|who|when|where|can|could|would|will|do|does|did|is|are|tell|please)\b`)
)

// minCues is how many of a fact's cue words a question must use to be
// about it; one shared word ("how many apples?") is not enough when
// several facts mention apples. A fact with a single cue needs just it.
const minCues = 2

// readAgent classifies an agent message against the facts a user holds.
// Order matters: an answer statement wins over a question; a question
// that clearly names one fact is about that fact even when it also says
// "answer"; otherwise asking for the answer, then an unclear question,
// then anything else.
func readAgent(msg string, facts []dialog.Fact) reading {
	if a, ok := ExtractAnswer(msg); ok {
		return reading{kind: intentAnswer, answer: a}
	}
	question := strings.Contains(msg, "?") || questionRe.MatchString(msg)
	best, ties, bestScore := -1, 0, 0
	if question {
		stems := map[string]bool{}
		for _, w := range wordStems(msg) {
			stems[w] = true
		}
		for i, f := range facts {
			s := 0
			for _, c := range f.Cues {
				if stems[c] {
					s++
				}
			}
			if s == 0 || s < min(minCues, len(f.Cues)) {
				continue
			}
			switch {
			case s > bestScore:
				best, bestScore, ties = i, s, 1
			case s == bestScore:
				ties++
			}
		}
	}
	switch {
	case best >= 0 && ties == 1:
		return reading{kind: intentAskFact, fact: best}
	case askAnswerRe.MatchString(msg):
		return reading{kind: intentAskAnswer}
	case best >= 0:
		return reading{kind: intentAskUnclear}
	}
	return reading{kind: intentOther}
}

// lastAgent returns the last assistant message of history.
func lastAgent(history []dialog.Message) string {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == dialog.RoleAssistant {
			return history[i].Content
		}
	}
	return ""
}
