package docedit

import (
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

func TestExtractDocument(t *testing.T) {
	for _, tc := range []struct {
		name, msg, want string
		ok              bool
	}{
		{"plain", "Here it is.\nRevised document:\nOne two. Three four.\n\nAnything else?", "One two. Three four.", true},
		{"same line", "Revised document: One two. Three four.", "One two. Three four.", true},
		{"case and indent", "  revised DOCUMENT:\nOne two.", "One two.", true},
		{"wrapped lines joined", "Revised document:\nOne two\nthree four.\n\nBye", "One two three four.", true},
		{"blank line after marker", "Revised document:\n\nOne two.\n\nIs that right?", "One two.", true},
		{"fenced", "Revised document:\n```\nOne two.\n```\nAnything else?", "One two. Anything else?", true},
		{"fenced then blank", "Revised document:\n```text\nOne two.\n```\n\nAnything else?", "One two.", true},
		{"last of several", "Revised document:\nFirst version.\n\nRevised document:\nSecond version.", "Second version.", true},
		{"empty marker ignored", "Revised document:\nGood one.\n\nRevised document:", "Good one.", true},
		{"adjacent markers", "Revised document:\nA b.\nRevised document:\nC d.", "C d.", true},
		{"no marker", "What should I change?", "", false},
		{"marker mid-line does not count", "I wrote Revised document: here.", "", false},
		{"only marker", "Revised document:   \n\n", "", false},
		{"crlf", "Revised document:\r\nOne two.\r\n\r\nOk?", "One two.", true},
		{"whitespace collapsed", "Revised document:\n One   two.\tThree. ", "One two. Three.", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ExtractDocument(tc.msg)
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestFinalDocument(t *testing.T) {
	msgs := []dialog.Message{
		{Role: dialog.RoleUser, Content: "Fix it."},
		{Role: dialog.RoleAssistant, Content: "Revised document:\nFirst try."},
		{Role: dialog.RoleUser, Content: "Revised document:\nUser text."},
		{Role: dialog.RoleAssistant, Content: "What else should I change?"},
	}
	if got, want := FinalDocument("The  draft.", msgs), "First try."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := FinalDocument("The  draft.", msgs[:1]), "The draft."; got != want {
		t.Errorf("no document: got %q, want the draft %q", got, want)
	}
}

func FuzzExtractDocument(f *testing.F) {
	for _, s := range []string{"Revised document:\nA b.", "revised document: x\n\ny", "```\nRevised document:\n```\n", "", "Revised document:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		doc, ok := ExtractDocument(msg)
		if ok != (doc != "") {
			t.Fatalf("ok %v with document %q", ok, doc)
		}
		if doc != Normalize(doc) || strings.ContainsAny(doc, "\n\r") {
			t.Fatalf("document %q not normalised", doc)
		}
		// A message made of one shown document gives that document back.
		if ok && !strings.Contains(doc, "```") && !strings.Contains(strings.ToLower(doc), strings.ToLower(DocMarker)) {
			if again, ok2 := ExtractDocument(DocMarker + "\n" + doc); !ok2 || again != doc {
				t.Fatalf("round trip of %q gave %q", doc, again)
			}
		}
	})
}
