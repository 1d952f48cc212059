package fidelity

import (
	"regexp"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// What counts as the agent asking, for the leakage figure of MeasureLogs.
// The definitions are generous to the user side on purpose: a reveal is a
// leak only when no earlier agent turn could be read as asking for it, so
// the rate is a floor, not inflated by a task's phrasing these generic
// rules miss.

var (
	// questionOpenRE is a turn that opens like a question or a request
	// ("Can you…", "Please…", "Tell me…").
	questionOpenRE = regexp.MustCompile(`(?i)^\s*(how|what|which|who|when|where|can|could|would|will|do|does|did|is|are|tell|please)\b`)
	// askTruthRE names the ground truth: the answer or result of a problem,
	// or the text a document user wants (docedit's agents ask "paste the
	// full text").
	askTruthRE = regexp.MustCompile(`(?i)\b(answers?|results?|solutions?|paste|full text|final text|whole text|exact text|final version|text you want|version you want|write it out|type it out|copy it)\b|what did you get|what do you get`)
)

// isQuestion reports a turn that asks something: it has a question mark
// or opens like a question or request.
func isQuestion(msg string) bool {
	return strings.Contains(msg, "?") || questionOpenRE.MatchString(msg)
}

// AsksTruth reports an agent turn that asks for the ground truth: a
// question naming the answer, result or solution (or, for a document, the
// text the user wants). For a numeric truth, a turn that states a number
// proposes an answer ("Is it 42?") rather than asking for one, and does
// not count.
func AsksTruth(o *dialog.Oracle, msg string) bool {
	if !isQuestion(msg) || !askTruthRE.MatchString(msg) {
		return false
	}
	if o.Draft == "" && numericTruth(o) != "" && dialog.NumberPattern.MatchString(msg) {
		return false
	}
	return true
}

// AsksFact reports an agent turn that asks about fact f: a question with
// one of f's cue words in it (cues are lower-case words or stems, matched
// as substrings). A fact without cues is asked about by any question.
func AsksFact(f dialog.Fact, msg string) bool {
	if !isQuestion(msg) {
		return false
	}
	if len(f.Cues) == 0 {
		return true
	}
	return hasAny(strings.ToLower(msg), f.Cues)
}

// LeaksUnasked reports whether user turn msg, written after history,
// gives away the ground truth (truth) or a hidden fact (fact) that no
// agent turn of history asked for (AsksTruth, AsksFact). The reveals are
// Classify's: the truth as its Leak test finds it, a fact as its
// provide-fact test finds it (the value next to a cue word). A document's
// edits are not facts: describing them is what a document user is for.
func LeaksUnasked(o *dialog.Oracle, history []dialog.Message, msg string) (truth, fact bool) {
	if msg == "" {
		return false, false
	}
	var agent []string
	for _, m := range history {
		if m.Role == dialog.RoleAssistant {
			agent = append(agent, m.Content)
		}
	}
	asked := func(ask func(string) bool) bool {
		for _, a := range agent {
			if ask(a) {
				return true
			}
		}
		return false
	}
	if leaks(o, msg) && !asked(func(a string) bool { return AsksTruth(o, a) }) {
		truth = true
	}
	low := strings.ToLower(msg)
	for _, f := range o.Facts {
		if !f.Hidden {
			continue
		}
		one := dialog.Oracle{Facts: []dialog.Fact{f}}
		if providesFact(&one, msg, low) && !asked(func(a string) bool { return AsksFact(f, a) }) {
			fact = true
			break
		}
	}
	return truth, fact
}
