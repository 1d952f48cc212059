package docedit

import "github.com/calibrl/calibrl/dialog"

// ProbeMessages gives the fidelity probes' agent turns for a document: a
// bad final document (the draft handed back unchanged), the target itself,
// and a request to paste the wanted text.
func (t *Task) ProbeMessages(o *dialog.Oracle) (wrong, right, ask string) {
	return "Here is my revision.\n" + DocMarker + "\n" + o.Draft,
		"Here is my revision.\n" + DocMarker + "\n" + o.Truth,
		msgAskPaste
}
