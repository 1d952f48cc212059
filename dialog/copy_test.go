package dialog

import (
	"strings"
	"testing"
)

// Every Copy kind reads back from its String; anything else is an error
// naming the kinds.
func TestParseCopy(t *testing.T) {
	for _, c := range []Copy{CopyOff, CopyNumbers, CopyValues} {
		got, err := ParseCopy(c.String())
		if err != nil || got != c {
			t.Errorf("ParseCopy(%q) = %v, %v", c.String(), got, err)
		}
	}
	for _, s := range []string{"", "Values", "number", "copy"} {
		if _, err := ParseCopy(s); err == nil || !strings.Contains(err.Error(), "off, numbers, values") {
			t.Errorf("ParseCopy(%q): %v, want an error naming the kinds", s, err)
		}
	}
	if s := Copy(7).String(); s != "Copy(7)" {
		t.Errorf("Copy(7) = %q", s)
	}
}

// HeldValues reads support's kinds of values whole from every part of the
// problem, trims a sentence's period and keeps no word.
func TestHeldValues(t *testing.T) {
	o := &Oracle{
		Instruction: "Update the email on account A-3817 to omar84@inbox.org, then move booking B-12.",
		Opening:     "I want to change a follow-up booking.",
		Truth:       "[change booking B-12 date=2026-06-11]",
		Facts:       []Fact{{Key: "n", Value: "1,200"}},
	}
	got := o.HeldValues()
	want := []string{"A-3817", "omar84@inbox.org", "B-12", "2026-06-11", "1", "200"}
	for _, w := range want {
		if !got[w] {
			t.Errorf("HeldValues lacks %q: %v", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("HeldValues = %v, want exactly %v", got, want)
	}
}
