package docedit

import (
	"regexp"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// reading is a user's understanding of one agent message. Both scripted
// users read the agent the same way and differ only in how they respond.
type reading struct {
	doc    string // the document the message shows
	hasDoc bool
	// askTarget: the agent asks the user to paste the text it wants.
	askTarget bool
	// askChange: the agent asks what to change; askExact: it asks for the
	// exact words; askRest: it asks how a new sentence goes on.
	askChange, askExact, askRest bool
}

var (
	askTargetRe = regexp.MustCompile(`(?i)\b(paste|full text|final text|whole text|exact text|final version|text you want|version you want|write it out|type it out|copy it)\b`)
	askRestRe   = regexp.MustCompile(`(?i)\b(continue|continues|goes on|go on|rest of (it|the sentence)|how does it end)\b`)
	askExactRe  = regexp.MustCompile(`(?i)\b(exact|exactly|precise|precisely|quote|word for word|which words)\b`)
	questionRe  = regexp.MustCompile(`(?i)^\s*(what|which|how|where|could|can|would|will|do|does|is|are|tell|please)\b`)
	askChangeRe = regexp.MustCompile(`(?i)\b(change|fix|wrong|edit|else|off|differ|improve|want|need|should|missing|say)`)
)

// readTurn reads the agent's last turn in history as the environment
// applied it: a turn with a full document or a command delivers the
// current document after it (FinalDocument from draft), so a user judges
// applied commands as it judges a revision.
func readTurn(draft string, history []dialog.Message) reading {
	r := readAgent(lastAgent(history))
	if t, ok := lastTurn(draft, history); ok && t.Delivered {
		r.doc, r.hasDoc = t.Doc, true
	}
	return r
}

// readAgent classifies an agent message, read with its quote calls
// taken out (StripQuoteCalls).
func readAgent(msg string) reading {
	var r reading
	msg = StripQuoteCalls(msg)
	r.doc, r.hasDoc = ExtractDocument(msg)
	question := strings.Contains(msg, "?") || questionRe.MatchString(msg)
	r.askTarget = askTargetRe.MatchString(msg)
	r.askRest = question && askRestRe.MatchString(msg)
	r.askChange = question && askChangeRe.MatchString(msg)
	r.askExact = askExactRe.MatchString(msg)
	return r
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
