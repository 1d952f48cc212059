package fidelity

import (
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// Act is a user's dialogue act: what one user turn does.
type Act string

const (
	// ProvideFact: the turn gives a hidden fact or a concrete edit.
	ProvideFact Act = "provide_fact"
	// Clarify: the user is confused or asks back.
	Clarify Act = "clarify"
	// Accept: the user approves the agent's outcome.
	Accept Act = "accept"
	// Reject: the user says the outcome is wrong without giving the fix.
	Reject Act = "reject"
	// Leak: the user states the ground truth (the answer, the target text).
	Leak Act = "leak"
	// End: the user leaves without accepting (gives up, stops early).
	End Act = "end"
	// Other: none of the above (an opening, small talk).
	Other Act = "other"
	// Gone: the conversation had already ended before this turn index; it
	// lets distributions of conversations of different lengths compare.
	Gone Act = "gone"
)

// Acts lists every act in report order.
var Acts = []Act{ProvideFact, Clarify, Accept, Reject, Leak, End, Other, Gone}

var (
	rejectCues = []string{"doesn't match", "does not match", "not right", "not what i", "not it", "that's wrong",
		"didn't make it better", "changed back", "doesn't look quite right", "is wrong",
		"still not", "doesn't look right", "try again", "not correct", "isn't right", "undid", "undo",
		"changed it back", "you changed", "not quite", "no, ", "not there yet", "still off", "still wrong",
		"don't think that", "don't think it"}
	acceptCues = []string{"that's right", "that is right", "correct", "matches", "that's what i got",
		"looks good", "perfect", "great", "exactly", "that's it", "yes", "good now", "approve", "that works"}
	leaveCues = []string{"someone else", "figure it out myself", "taking too long", "bye", "never mind",
		"finish it from here", "give up", "not working", "stop here", "leave it"}
	clarifyCues = []string{"not sure what you mean", "don't follow", "what do you mean", "which number",
		"which one", "confused", "don't understand", "what are you asking"}
)

// Classify names the act of one user turn, given the oracle context it
// was written from and whether the turn ended the conversation. It is the
// one function every simulator is judged by (human, naive, learned,
// remote). Precedence, strongest first: leak, provide-fact, reject, accept,
// end, clarify, other — a turn that both gives a fact and asks back counts
// as giving the fact.
func Classify(o *dialog.Oracle, msg string, ended bool) Act {
	low := strings.ToLower(msg)
	if leaks(o, msg) {
		return Leak
	}
	if providesFact(o, msg, low) {
		return ProvideFact
	}
	if hasAny(low, rejectCues) {
		return Reject
	}
	if ended {
		if hasAny(low, leaveCues) || !hasAny(low, acceptCues) {
			return End
		}
		return Accept
	}
	if hasAny(low, acceptCues) && !strings.Contains(low, "?") {
		return Accept
	}
	if hasAny(low, clarifyCues) {
		return Clarify
	}
	return Other
}

func hasAny(s string, cues []string) bool {
	for _, c := range cues {
		if strings.Contains(s, c) {
			return true
		}
	}
	return false
}

// leaks reports a turn that gives away the ground truth: for a document
// task, the target or at least half of its sentences that the draft lacks;
// otherwise the answer's number where it is not also a fact's value.
func leaks(o *dialog.Oracle, msg string) bool {
	if o.Truth == "" {
		return false
	}
	if o.Draft != "" {
		return leaksDocument(o, msg)
	}
	truth := numericTruth(o)
	if truth == "" {
		return strings.Contains(strings.ToLower(msg), strings.ToLower(o.Truth))
	}
	for _, f := range o.Facts {
		if dialog.CanonNumber(f.Value) == truth {
			return false // the number is also a given fact: ambiguous, not a leak
		}
	}
	for _, n := range dialog.NumberPattern.FindAllString(msg, -1) {
		if dialog.CanonNumber(n) == truth {
			return true
		}
	}
	return false
}

func leaksDocument(o *dialog.Oracle, msg string) bool {
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	m := norm(msg)
	if strings.Contains(m, norm(o.Truth)) {
		return true
	}
	draft := norm(o.Draft)
	var novel, shown int
	for _, s := range sentences(o.Truth) {
		s = norm(s)
		if len(strings.Fields(s)) < 3 || strings.Contains(draft, s) {
			continue
		}
		novel++
		if strings.Contains(m, s) {
			shown++
		}
	}
	return novel > 0 && 2*shown >= novel && shown > 0
}

func sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if r == '.' || r == '!' || r == '?' || r == '\n' {
			if s := strings.TrimSpace(text[start : i+1]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// providesFact reports a turn carrying a hidden fact's value next to one
// of its cue words, or a concrete edit's new text.
func providesFact(o *dialog.Oracle, msg, low string) bool {
	nums := map[string]bool{}
	for _, n := range dialog.NumberPattern.FindAllString(msg, -1) {
		nums[dialog.CanonNumber(n)] = true
	}
	for _, f := range o.Facts {
		if !f.Hidden {
			continue
		}
		v := dialog.CanonNumber(f.Value)
		if v != "" && nums[v] && (len(f.Cues) == 0 || hasAny(low, f.Cues)) {
			return true
		}
		if v == "" && f.Value != "" && strings.Contains(low, strings.ToLower(f.Value)) {
			return true
		}
	}
	for _, e := range o.Edits {
		if to := strings.ToLower(strings.TrimSpace(e.To)); len(to) >= 3 && strings.Contains(low, to) {
			return true
		}
	}
	return false
}

// numericTruth is o's ground truth in canonical form when the truth is a
// number and nothing else (mathchat's "42"), and "" otherwise. A truth
// that merely holds a number, such as support's tool call "[change booking
// B-5349 date=2026-06-11]", is text: read as its first number it matched
// the booking fact's own id and no reply ever counted as a leak.
func numericTruth(o *dialog.Oracle) string {
	t := strings.TrimSpace(o.Truth)
	if t == "" || dialog.NumberPattern.FindString(t) != t {
		return ""
	}
	return dialog.CanonNumber(t)
}
