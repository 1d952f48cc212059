package docedit

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// Edit commands. Besides a full "Revised document:" block, an agent may
// deliver its work as commands that the environment applies to the
// current document, in the phrasing the users already speak (phrasing.go):
//
//	In sentence N, change "OLD" to "NEW".   (also: Replace "OLD" with "NEW".)
//	Take out the sentence "SENTENCE".       (also: Delete sentence N.)
//	After sentence N, add the sentence "SENTENCE".
//	At the start, add the sentence "SENTENCE".
//	Swap sentences N and M.
//
// A new sentence may also be given in the two halves the human proxy
// dictates it in: "After sentence N, add a new sentence that starts
// "FIRST HALF"." and then, in the same turn, "The new sentence goes on
// "SECOND HALF"." (which continues the sentence the turn added last).
//
// Commands are found anywhere in an agent's turn outside its document
// blocks, case ignored, and applied in the order written. Sentence numbers
// count from 1 in the document everyone was looking at when the turn
// began (the current document; after a full document in the same turn,
// that one), however the turn's earlier commands moved its sentences. A
// phrase is changed in its sentence N when that sentence holds it, else at
// its first occurrence; a deleted sentence must be quoted whole. A command
// whose quoted phrase or sentence is not in the document, or whose
// sentence number is not, does nothing, and the environment says so.
//
// The current document is the draft, changed by every agent turn in turn
// (FinalDocument). After a turn with commands the environment shows it
// (Environment): the rollout records a system message "Current
// document:" with the document after the agent's turn, which the user and
// the agent's next turn both read.

// CommandKind is a kind of edit command.
type CommandKind int

const (
	// CmdReplace changes From to To (To may be empty), in sentence N
	// when N > 0 and that sentence holds From.
	CmdReplace CommandKind = iota
	// CmdDeleteQuoted takes out the sentence From.
	CmdDeleteQuoted
	// CmdDeleteNumber takes out sentence N.
	CmdDeleteNumber
	// CmdInsert adds the sentence To after sentence N (N 0: at the start).
	CmdInsert
	// CmdSwap swaps sentences N and M.
	CmdSwap
	// CmdContinue adds To to the end of the sentence the turn added last.
	CmdContinue
)

// Command is one edit command read from an agent's turn.
type Command struct {
	Kind     CommandKind
	N, M     int    // 1-based sentence numbers; 0 where none is given
	From, To string // the quoted phrase (or sentence) and its replacement (or the new sentence)
	// Start and End are the command's byte range in the text it was read from.
	Start, End int
}

// CurrentMarker introduces the environment's current document in its note.
const CurrentMarker = "Current document:"

const (
	cmdNum    = `(\d{1,3})`
	cmdQuote  = `"([^"\n]+)"`
	cmdQuote0 = `"([^"\n]*)"`
	// cmdSentence is an optional "In sentence N," or "Sentence N:" before
	// a phrase command.
	cmdSentence = `(?:\b(?:in\s+)?sentence\s+` + cmdNum + `\s*[,:]?\s*)?`
	cmdNewSent  = `\s*[,:]?\s*(?:add|insert)\s+(?:the|a|a\s+new)\s+sentence\s*(?:that\s+starts\s*|starting\s*)?:?\s*` + cmdQuote
)

var (
	cmdReplaceRe    = regexp.MustCompile(`(?i)` + cmdSentence + `\b(?:change|replace)\s+` + cmdQuote + `\s+(?:to|with|by)\s+` + cmdQuote0)
	cmdShouldSayRe  = regexp.MustCompile(`(?i)` + cmdSentence + `\bit\s+should\s+(?:say|read)\s+` + cmdQuote0 + `\s*,?\s+not\s+` + cmdQuote)
	cmdDelQuotedRe  = regexp.MustCompile(`(?i)\b(?:take\s+out|delete|remove|drop)\s+the\s+sentence\s+` + cmdQuote)
	cmdDelNumberRe  = regexp.MustCompile(`(?i)\b(?:take\s+out|delete|remove|drop)\s+sentence\s+` + cmdNum + `\b`)
	cmdInsertRe     = regexp.MustCompile(`(?i)\bafter\s+sentence\s+` + cmdNum + cmdNewSent)
	cmdInsertHeadRe = regexp.MustCompile(`(?i)\bat\s+the\s+(?:start|beginning)` + cmdNewSent)
	cmdSwapRe       = regexp.MustCompile(`(?i)\bswap\s+sentences\s+` + cmdNum + `\s+and\s+` + cmdNum + `\b`)
	cmdContinueRe   = regexp.MustCompile(`(?i)\bthe\s+new\s+sentence\s+(?:goes\s+on|continues)\s*:?\s*` + cmdQuote)
)

// ParseCommands reads the edit commands of text, in the order written.
// Commands do not overlap: of two that do, the one starting first is read.
func ParseCommands(text string) []Command {
	var cmds []Command
	atoi := func(m []int, g int) int {
		if m[2*g] < 0 {
			return 0
		}
		n, _ := strconv.Atoi(text[m[2*g]:m[2*g+1]])
		return n
	}
	str := func(m []int, g int) string { return text[m[2*g]:m[2*g+1]] }
	each := func(re *regexp.Regexp, f func(m []int) Command) {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			c := f(m)
			c.Start, c.End = m[0], m[1]
			cmds = append(cmds, c)
		}
	}
	each(cmdReplaceRe, func(m []int) Command {
		return Command{Kind: CmdReplace, N: atoi(m, 1), From: str(m, 2), To: str(m, 3)}
	})
	each(cmdShouldSayRe, func(m []int) Command {
		return Command{Kind: CmdReplace, N: atoi(m, 1), To: str(m, 2), From: str(m, 3)}
	})
	each(cmdDelQuotedRe, func(m []int) Command { return Command{Kind: CmdDeleteQuoted, From: str(m, 1)} })
	each(cmdDelNumberRe, func(m []int) Command { return Command{Kind: CmdDeleteNumber, N: atoi(m, 1)} })
	each(cmdInsertRe, func(m []int) Command { return Command{Kind: CmdInsert, N: atoi(m, 1), To: str(m, 2)} })
	each(cmdInsertHeadRe, func(m []int) Command { return Command{Kind: CmdInsert, To: str(m, 1)} })
	each(cmdSwapRe, func(m []int) Command { return Command{Kind: CmdSwap, N: atoi(m, 1), M: atoi(m, 2)} })
	each(cmdContinueRe, func(m []int) Command { return Command{Kind: CmdContinue, To: str(m, 1)} })
	sort.SliceStable(cmds, func(i, j int) bool { return cmds[i].Start < cmds[j].Start })
	out := cmds[:0]
	end := 0
	for _, c := range cmds {
		if c.Start < end {
			continue
		}
		out = append(out, c)
		end = c.End
	}
	return out
}

// String writes the command in the form ParseCommands reads.
func (c Command) String() string {
	switch c.Kind {
	case CmdReplace:
		if c.N > 0 {
			return fmt.Sprintf("In sentence %d, change \"%s\" to \"%s\".", c.N, c.From, c.To)
		}
		return fmt.Sprintf("Change \"%s\" to \"%s\".", c.From, c.To)
	case CmdDeleteQuoted:
		return fmt.Sprintf("Take out the sentence \"%s\".", c.From)
	case CmdDeleteNumber:
		return fmt.Sprintf("Delete sentence %d.", c.N)
	case CmdInsert:
		if c.N == 0 {
			return fmt.Sprintf("At the start, add the sentence \"%s\".", c.To)
		}
		return fmt.Sprintf("After sentence %d, add the sentence \"%s\".", c.N, c.To)
	case CmdSwap:
		return fmt.Sprintf("Swap sentences %d and %d.", c.N, c.M)
	case CmdContinue:
		return fmt.Sprintf("The new sentence goes on \"%s\".", c.To)
	}
	return ""
}

// docState is the document while a turn's commands are applied: its
// sentences, with ids that stay put as sentences move, and the ids of the
// reference document that sentence numbers count in.
type docState struct {
	sents []sent
	ref   []int
	next  int
	added int // id of the sentence added last, or -1
}

func newDocState(doc string) *docState {
	d := &docState{added: -1}
	for _, s := range SplitSentences(doc) {
		d.sents = append(d.sents, sent{d.next, s})
		d.ref = append(d.ref, d.next)
		d.next++
	}
	return d
}

func (d *docState) text() string {
	ts := make([]string, 0, len(d.sents))
	for _, s := range d.sents {
		ts = append(ts, s.text)
	}
	return Normalize(JoinSentences(ts))
}

// at returns the position now of reference sentence n (1-based), or -1.
func (d *docState) at(n int) int {
	if n < 1 || n > len(d.ref) {
		return -1
	}
	return slices.IndexFunc(d.sents, func(s sent) bool { return s.id == d.ref[n-1] })
}

// sameSentence compares a quoted sentence with a document's, ignoring
// spacing and a missing final stop.
func sameSentence(quoted, s string) bool {
	q, s := Normalize(quoted), Normalize(s)
	return q != "" && (q == s || strings.TrimRight(q, ".!?") == strings.TrimRight(s, ".!?"))
}

// apply carries out one command; why says, when it did nothing, why not.
func (d *docState) apply(c Command) (ok bool, why string) {
	noSentence := func(n int) string { return fmt.Sprintf("there is no sentence %d", n) }
	switch c.Kind {
	case CmdReplace:
		from := Normalize(c.From)
		order := make([]int, 0, len(d.sents)+1)
		if i := d.at(c.N); i >= 0 {
			order = append(order, i)
		}
		for i := range d.sents {
			order = append(order, i)
		}
		for _, i := range order {
			if t, found := replacePhrase(d.sents[i].text, from, Normalize(c.To)); found {
				if t = Normalize(t); t == "" {
					d.sents = slices.Delete(d.sents, i, i+1)
				} else {
					d.sents[i].text = t
				}
				return true, ""
			}
		}
		return false, fmt.Sprintf("\"%s\" is not in the document", c.From)
	case CmdDeleteQuoted:
		for i, s := range d.sents {
			if sameSentence(c.From, s.text) {
				d.sents = slices.Delete(d.sents, i, i+1)
				return true, ""
			}
		}
		return false, fmt.Sprintf("the sentence \"%s\" is not in the document", c.From)
	case CmdDeleteNumber:
		i := d.at(c.N)
		if i < 0 {
			return false, noSentence(c.N)
		}
		d.sents = slices.Delete(d.sents, i, i+1)
		return true, ""
	case CmdInsert:
		text := Normalize(c.To)
		at := 0
		if c.N > 0 {
			i := d.at(c.N)
			if i < 0 {
				return false, noSentence(c.N)
			}
			at = i + 1
		}
		if text == "" {
			return false, "the new sentence is empty"
		}
		d.sents = slices.Insert(d.sents, at, sent{d.next, text})
		d.added = d.next
		d.next++
		return true, ""
	case CmdContinue:
		i := slices.IndexFunc(d.sents, func(s sent) bool { return s.id == d.added })
		if i < 0 {
			return false, "no new sentence was added to go on"
		}
		if text := Normalize(c.To); text != "" {
			d.sents[i].text += " " + text
		}
		return true, ""
	case CmdSwap:
		i, j := d.at(c.N), d.at(c.M)
		switch {
		case i < 0:
			return false, noSentence(c.N)
		case j < 0:
			return false, noSentence(c.M)
		case i == j:
			return false, fmt.Sprintf("sentences %d and %d are the same", c.N, c.M)
		}
		d.sents[i], d.sents[j] = d.sents[j], d.sents[i]
		return true, ""
	}
	return false, "unknown command"
}

// TurnResult is what the environment made of one agent turn.
type TurnResult struct {
	// Doc is the current document after the turn.
	Doc string
	// Delivered: the turn showed a full document or gave a command.
	Delivered bool
	// Commands counts the turn's commands, Applied those that took effect.
	Commands, Applied int
	// Failures says, for each command that did nothing, why.
	Failures []string
}

// ApplyTurn applies an agent's turn to the current document cur: each
// full document it shows replaces the document, and its commands are
// applied in order. The turn is read with its quote calls taken out
// (StripQuoteCalls).
func ApplyTurn(cur, msg string) TurnResult {
	r := TurnResult{Doc: Normalize(cur)}
	lines := splitLines(StripQuoteCalls(msg))
	d := newDocState(cur)
	commands := func(a, b int) {
		if a >= b {
			return
		}
		for _, c := range ParseCommands(strings.Join(lines[a:b], "\n")) {
			r.Commands++
			if ok, why := d.apply(c); ok {
				r.Applied++
			} else {
				r.Failures = append(r.Failures, "Not done: "+why+".")
			}
		}
	}
	at := 0
	for _, b := range documentBlocks(lines) {
		commands(at, b.start)
		d = newDocState(b.doc)
		r.Delivered = true
		at = b.end
	}
	commands(at, len(lines))
	r.Doc = d.text()
	r.Delivered = r.Delivered || r.Commands > 0
	return r
}

// Note is what the environment shows after a turn with commands: a line
// for each command that did nothing, then the current document.
func (r TurnResult) Note() string {
	var b strings.Builder
	for _, f := range r.Failures {
		b.WriteString(f)
		b.WriteString("\n")
	}
	b.WriteString(CurrentMarker)
	b.WriteString("\n")
	if r.Doc == "" {
		b.WriteString("(empty)")
	} else {
		b.WriteString(r.Doc)
	}
	return b.String()
}

// FinalDocument is the current document after msgs: the draft, changed by
// each assistant message in turn (ApplyTurn). With no full document and
// no command it is the draft.
func FinalDocument(draft string, msgs []dialog.Message) string {
	doc := Normalize(draft)
	for _, m := range msgs {
		if m.Role == dialog.RoleAssistant {
			doc = ApplyTurn(doc, m.Content).Doc
		}
	}
	return doc
}

// lastTurn returns the environment's result of the last assistant message
// of history, applied to the document before it, and whether there is one.
func lastTurn(draft string, history []dialog.Message) (TurnResult, bool) {
	for k := len(history) - 1; k >= 0; k-- {
		if history[k].Role == dialog.RoleAssistant {
			return ApplyTurn(FinalDocument(draft, history[:k]), history[k].Content), true
		}
	}
	return TurnResult{Doc: Normalize(draft)}, false
}

// Environment is the task's environment (dialog.Environment): after an
// agent turn with commands it shows the current document.
type Environment struct{}

// Respond returns the note on the last message of history, the agent's
// turn: "" unless it has commands, else TurnResult.Note.
func (Environment) Respond(v *dialog.View, history []dialog.Message) string {
	if n := len(history); n == 0 || history[n-1].Role != dialog.RoleAssistant {
		return ""
	}
	r, _ := lastTurn(v.Draft, history)
	if r.Commands == 0 {
		return ""
	}
	return r.Note()
}
