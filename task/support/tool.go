package support

import (
	"regexp"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// A call is one tool call an agent writes in its turn, in a fixed syntax:
//
//	[lookup account A-3817]   [lookup order O-5520]   [lookup booking B-12]
//	[cancel order O-5520]
//	[change booking B-12 date=2026-05-03]
//	[change account A-3817 email=dana38@mail.com]
//
// The environment writes the result right after the closing bracket,
// " => (…)", as mathchat's calculator writes a step's result after "=":
// the text is forced into the turn and trainers give it no loss
// (dialog.ForcedSpans). A result never holds a bracket or a closing
// parenthesis, so the calls and results of a turn read back unambiguously.
type call struct {
	Verb, Kind, ID string
	// Field and Value are a change's "date=…" or "email=…".
	Field, Value string
	// Start and End are the call's byte range in the text it was read
	// from, brackets included.
	Start, End int
}

// String writes the call in its syntax.
func (c call) String() string {
	s := "[" + c.Verb + " " + c.Kind + " " + c.ID
	if c.Field != "" {
		s += " " + c.Field + "=" + c.Value
	}
	return s + "]"
}

// action reports whether the call may change the database.
func (c call) action() bool { return c.Verb != "lookup" }

var (
	callRE   = regexp.MustCompile(`\[(lookup|cancel|change) (account|order|booking) ([A-Z]-\d{1,8})(?: (date|email)=([^\]\s()]{1,64}))?\]`)
	resultRE = regexp.MustCompile(`^ => \([^()\[\]]*\)`)
	dateRE   = regexp.MustCompile(`^2\d{3}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$`)
	emailRE  = regexp.MustCompile(`^[a-z0-9._]{1,32}@[a-z0-9-]{1,32}\.[a-z]{2,8}$`)
)

// parseCalls reads every call in text, in order. Text outside the syntax
// is ignored, so a turn of plain words has no calls.
func parseCalls(text string) []call {
	var out []call
	for _, m := range callRE.FindAllStringSubmatchIndex(text, -1) {
		c := call{Verb: text[m[2]:m[3]], Kind: text[m[4]:m[5]], ID: text[m[6]:m[7]], Start: m[0], End: m[1]}
		if m[8] >= 0 {
			c.Field, c.Value = text[m[8]:m[9]], text[m[10]:m[11]]
		}
		out = append(out, c)
	}
	return out
}

// withoutCalls is text with every call and its result cut out: what the
// user reads as the agent's words.
func withoutCalls(text string) string {
	var b strings.Builder
	for {
		loc := callRE.FindStringIndex(text)
		if loc == nil {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:loc[0]])
		text = text[loc[1]:]
		if r := resultRE.FindString(text); r != "" {
			text = text[len(r):]
		}
	}
}

// exec runs c on the world d with changes s (updated in place by a
// successful action) and returns the result text, without the " => ( )".
func (d db) exec(s state, c call) (result string, ok bool) {
	if !d.exists(c.Kind, c.ID) {
		return "error: no " + c.Kind + " " + c.ID, false
	}
	switch {
	case c.Verb == "lookup" && c.Field == "":
		return d.lookup(s, c.Kind, c.ID), true
	case c.Verb == "cancel" && c.Kind == kindOrder && c.Field == "":
		switch st := d.get(s, c.ID+".status"); st {
		case statusPlaced:
			s[c.ID+".status"] = statusCancelled
			return c.ID + " cancelled", true
		default:
			return "error: " + c.ID + " " + st, false
		}
	case c.Verb == "change" && c.Kind == kindBooking && c.Field == "date":
		if !dateRE.MatchString(c.Value) {
			return "error: bad date", false
		}
		s[c.ID+".date"] = c.Value
		return c.ID + " date " + c.Value, true
	case c.Verb == "change" && c.Kind == kindAccount && c.Field == "email":
		if !emailRE.MatchString(c.Value) {
			return "error: bad email", false
		}
		s[c.ID+".email"] = c.Value
		return c.ID + " email " + c.Value, true
	}
	return "error: bad call", false
}

// lookup writes a row as it stands in s: an account with its orders'
// statuses and its bookings' dates.
func (d db) lookup(s state, kind, id string) string {
	switch kind {
	case kindOrder:
		return id + " " + d.get(s, id+".status")
	case kindBooking:
		return id + " " + d.get(s, id+".date")
	}
	a := d.accountRow(id)
	var b strings.Builder
	b.WriteString(id + " " + d.get(s, id+".email") + "; orders")
	for _, o := range a.Orders {
		b.WriteString(" " + o + " " + d.get(s, o+".status"))
	}
	b.WriteString("; bookings")
	for _, k := range a.Bookings {
		b.WriteString(" " + k + " " + d.get(s, k+".date"))
	}
	return b.String()
}

// Tool is the task's database tool (dialog.Tool): when an agent's turn so
// far ends in a call, it writes the call's result. The calls earlier in
// the same turn are replayed first, so a lookup after a cancel in one
// turn sees the cancel; a turn cannot see the changes of earlier turns
// (a tool completes a turn from its text alone), so a later turn's lookup
// shows the rows as the conversation found them. The score replays every
// turn (Task.Score), so what counts is always the whole conversation.
type Tool struct{ d db }

// Complete returns " => (RESULT)" when text ends in a call, else "".
func (t Tool) Complete(text string) string {
	if !strings.HasSuffix(text, "]") {
		return "" // the common case, answered without a regexp
	}
	calls := parseCalls(text)
	if len(calls) == 0 || calls[len(calls)-1].End != len(text) {
		return ""
	}
	s := state{}
	for _, c := range calls[:len(calls)-1] {
		t.d.exec(s, c)
	}
	r, _ := t.d.exec(s, calls[len(calls)-1])
	return " => (" + r + ")"
}

// Apply writes every call's result into a finished turn, as if the tool
// had written it while the turn was written: how the scripted agents'
// turns are made. A call already followed by a result keeps it.
func (t Tool) Apply(text string) string {
	var b strings.Builder
	for {
		loc := callRE.FindStringIndex(text)
		if loc == nil {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:loc[1]])
		text = text[loc[1]:]
		if r := resultRE.FindString(text); r != "" {
			b.WriteString(r)
			text = text[len(r):]
			continue
		}
		b.WriteString(t.Complete(b.String()))
	}
}

// replay runs every call of the agent's turns in order and returns what
// they changed: the conversation's final database, over the rows as they
// were.
func (d db) replay(agentTurns []string) state {
	s := state{}
	for _, turn := range agentTurns {
		for _, c := range parseCalls(turn) {
			d.exec(s, c)
		}
	}
	return d.diff(s)
}

// Results is the task's environment (dialog.Environment) for agents that
// cannot run the tool while they write, such as a trainer's model behind
// serve: after an agent turn with calls the tool did not complete, its
// note gives their results, with every earlier turn's changes applied.
// A turn whose calls all carry their results (calibrl's own agents, the
// scripted ones) gets no note, so the two never both speak.
type Results struct{ d db }

// Respond returns the results of the last agent turn's bare calls, one a
// line ("[cancel order O-5520] => (O-5520 cancelled)"), or "".
func (e Results) Respond(_ *dialog.View, history []dialog.Message) string {
	if len(history) == 0 || history[len(history)-1].Role != dialog.RoleAssistant {
		return ""
	}
	s := state{}
	var lines []string
	for i, m := range history {
		if m.Role != dialog.RoleAssistant {
			continue
		}
		for _, c := range parseCalls(m.Content) {
			r, _ := e.d.exec(s, c)
			if i == len(history)-1 && resultRE.FindString(m.Content[c.End:]) == "" {
				lines = append(lines, c.String()+" => ("+r+")")
			}
		}
	}
	return strings.Join(lines, "\n")
}
