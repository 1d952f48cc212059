package docedit

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// An editor is a scripted agent's working copy of the document and its
// reading of the users' concrete instructions (the templates in
// phrasing.go). Sentences carry stable ids so that "sentence 2" in an
// instruction means the second sentence of the document the user last saw
// (the agent's last shown revision) even after other edits moved it.
type editor struct {
	doc     []sent
	shown   []int // ids of the last shown document, in order
	nextID  int
	pending *pendingInsert
}

type sent struct {
	id   int
	text string
}

type pendingInsert struct {
	after int // id of the sentence it follows; -1 at the start
	first string
}

// opKind is one kind of instruction an agent reads from a user message.
type opKind int

const (
	opReplace opKind = iota
	opDeleteSentence
	opSwap
	opInsertStart
	opInsertRest
	opPaste
)

// op is one instruction: a, b are the strings or numbers it carries.
type op struct {
	kind opKind
	a, b string
	pos  int // byte offset in the message, for ordering
}

var (
	opNotRe     = regexp.MustCompile(`"([^"]+)",? not "([^"]+)"`)
	opToRe      = regexp.MustCompile(`"([^"]+)" (?:to|with) "([^"]+)"`)
	opTakeOutRe = regexp.MustCompile(`(?i)take out the sentence "([^"]+)"`)
	opAfterRe   = regexp.MustCompile(`(?i)after sentence (\d+), add a new sentence that starts "([^"]+)"`)
	opStartRe   = regexp.MustCompile(`(?i)at the start, add a new sentence that starts "([^"]+)"`)
	opGoesOnRe  = regexp.MustCompile(`(?i)the new sentence goes on "([^"]+)"`)
	opSwapRe    = regexp.MustCompile(`(?i)swap sentences (\d+) and (\d+)`)
	thatsAllRe  = regexp.MustCompile(`(?i)that's all|that's everything|already told you|nothing else|new version`)
)

// parseOps reads every instruction in a user message, in order.
func parseOps(msg string) []op {
	if i := strings.Index(msg, PasteMarker); i >= 0 {
		if t := Normalize(msg[i+len(PasteMarker):]); t != "" {
			return []op{{kind: opPaste, a: t, pos: i}}
		}
	}
	var ops []op
	add := func(re *regexp.Regexp, kind opKind, swapAB bool) {
		for _, m := range re.FindAllStringSubmatchIndex(msg, -1) {
			o := op{kind: kind, pos: m[0], a: msg[m[2]:m[3]]}
			if len(m) > 4 && m[4] >= 0 {
				o.b = msg[m[4]:m[5]]
			}
			if swapAB {
				o.a, o.b = o.b, o.a
			}
			ops = append(ops, o)
		}
	}
	add(opNotRe, opReplace, true) // "TO", not "FROM"
	add(opToRe, opReplace, false) // "FROM" to "TO"
	add(opTakeOutRe, opDeleteSentence, false)
	add(opAfterRe, opInsertStart, false)
	add(opStartRe, opInsertStart, false)
	add(opGoesOnRe, opInsertRest, false)
	add(opSwapRe, opSwap, false)
	for i := range ops {
		if ops[i].kind == opInsertStart && ops[i].b == "" { // "at the start": no number
			ops[i].a, ops[i].b = "0", ops[i].a
		}
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].pos < ops[j].pos })
	return ops
}

func newEditor(draft string) *editor {
	e := &editor{}
	for _, s := range SplitSentences(draft) {
		e.doc = append(e.doc, sent{e.nextID, s})
		e.shown = append(e.shown, e.nextID)
		e.nextID++
	}
	return e
}

func (e *editor) text() string {
	ts := make([]string, len(e.doc))
	for i, s := range e.doc {
		ts[i] = s.text
	}
	return JoinSentences(ts)
}

// show marks the current document as the one the user now sees.
func (e *editor) show() string {
	e.shown = e.shown[:0]
	for _, s := range e.doc {
		e.shown = append(e.shown, s.id)
	}
	return e.text()
}

func (e *editor) pos(id int) int {
	return slices.IndexFunc(e.doc, func(s sent) bool { return s.id == id })
}

// shownID maps a 1-based sentence number in the shown document to an id.
func (e *editor) shownID(n string) (int, bool) {
	k, err := strconv.Atoi(n)
	if err != nil || k < 1 || k > len(e.shown) {
		return 0, false
	}
	return e.shown[k-1], true
}

// apply carries out one instruction and reports whether it changed the
// working document (or, for the first half of a new sentence, was noted).
func (e *editor) apply(o op) bool {
	switch o.kind {
	case opReplace:
		for i, s := range e.doc {
			if t, ok := replacePhrase(s.text, o.a, o.b); ok {
				e.doc[i].text = t
				return true
			}
		}
	case opDeleteSentence:
		want := Normalize(o.a)
		for i, s := range e.doc {
			if s.text == want {
				e.doc = slices.Delete(e.doc, i, i+1)
				return true
			}
		}
	case opSwap:
		a, okA := e.shownID(o.a)
		b, okB := e.shownID(o.b)
		if okA && okB {
			i, j := e.pos(a), e.pos(b)
			if i >= 0 && j >= 0 && i != j {
				e.doc[i], e.doc[j] = e.doc[j], e.doc[i]
				return true
			}
		}
	case opInsertStart:
		after := -1
		if o.a != "0" {
			id, ok := e.shownID(o.a)
			if !ok {
				return false
			}
			after = id
		}
		e.pending = &pendingInsert{after: after, first: o.b}
		return true
	case opInsertRest:
		if e.pending == nil {
			return false
		}
		at := 0
		if e.pending.after >= 0 {
			if at = e.pos(e.pending.after) + 1; at == 0 {
				at = len(e.doc)
			}
		}
		e.doc = slices.Insert(e.doc, at, sent{e.nextID, Normalize(e.pending.first + " " + o.a)})
		e.nextID++
		e.pending = nil
		return true
	case opPaste:
		e.doc = e.doc[:0]
		for _, s := range SplitSentences(o.a) {
			e.doc = append(e.doc, sent{e.nextID, s})
			e.nextID++
		}
		return true
	}
	return false
}
