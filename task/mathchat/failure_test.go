package mathchat

import (
	"fmt"
	"math/big"
	"slices"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/tasktest"
)

// askFor is the careful agent's question about fact k of o.
func askFor(t *testing.T, o *dialog.Oracle, k int) string {
	t.Helper()
	l, _ := grammar()
	p := l.read(o.Instruction)
	i := 0
	for _, s := range p.stmts {
		if s.pat.num == numNone {
			continue
		}
		if i == k {
			return s.ask()
		}
		i++
	}
	t.Fatalf("%s has no fact %d", o.ID, k)
	return ""
}

// Each class on a conversation built to show it, on a problem with hidden
// facts, and none on a solved one.
func TestClassifyFailureByConstruction(t *testing.T) {
	tk, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var o *dialog.Oracle
	var hidden []int
	for i := 0; o == nil; i++ {
		oi, _, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		hidden = hidden[:0]
		for k, f := range oi.Facts {
			if f.Hidden {
				hidden = append(hidden, k)
			}
		}
		if len(hidden) >= 2 {
			o = oi
		}
	}
	given := -1
	for k, f := range o.Facts {
		if !f.Hidden && given < 0 && askFor(t, o, k) != "" {
			given = k // a number the opening gives (a distractor has no question)
		}
	}
	truth, _ := ParseTruth(o.Truth)
	wrong := fmt.Sprintf("The answer is %s.", new(big.Rat).Add(truth, big.NewRat(1, 1)).RatString())
	u := func(s string) dialog.Message { return dialog.Message{Role: dialog.RoleUser, Content: s} }
	a := func(s string) dialog.Message { return dialog.Message{Role: dialog.RoleAssistant, Content: s} }
	tell := func(k int) []dialog.Message {
		return []dialog.Message{a(askFor(t, o, k)), u(o.Facts[k].Text)}
	}
	all := func() []dialog.Message {
		var m []dialog.Message
		for _, k := range hidden {
			m = append(m, tell(k)...)
		}
		return m
	}
	cat := func(parts ...[]dialog.Message) []dialog.Message {
		m := []dialog.Message{u(o.Opening)}
		for _, p := range parts {
			m = append(m, p...)
		}
		return m
	}
	no := []dialog.Message{u("That's not it.")}
	cases := []struct {
		name string
		msgs []dialog.Message
		end  dialog.EndReason
		want []Failure
	}{
		{"guesses at once", cat([]dialog.Message{a(wrong)}, no), dialog.MaxTurns, []Failure{NeverAsks, TurnLimit}},
		{"answers after one of two", cat(tell(hidden[0]), []dialog.Message{a(wrong)}, no), dialog.GaveUp, []Failure{AnswersEarly, GivesUp}},
		{"asks again", cat(tell(hidden[0]), all(), []dialog.Message{a(wrong)}, no), dialog.MaxTurns, []Failure{AsksTold, Miscopies, TurnLimit}},
		{"repeats a rejected answer", cat(all(), []dialog.Message{a(wrong)}, no, []dialog.Message{a(wrong)}, no), dialog.GaveUp, []Failure{RepeatsRejected, Miscopies, GivesUp}},
		{"never answers", cat(all()), dialog.MaxTurns, []Failure{NoAnswer, TurnLimit}},
	}
	if given >= 0 {
		cases = append(cases, struct {
			name string
			msgs []dialog.Message
			end  dialog.EndReason
			want []Failure
		}{"asks for a given number", cat([]dialog.Message{a(askFor(t, o, given)), u(o.Facts[given].Text)}, all(), []dialog.Message{a(wrong)}, no), dialog.MaxTurns, []Failure{AsksTold, Miscopies, TurnLimit}})
	}
	for _, c := range cases {
		ep := &dialog.Episode{Oracle: *o, Messages: c.msgs, End: c.end}
		if got := ClassifyFailure(ep); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q\n%v", c.name, got, c.want, c.msgs)
		}
	}
	solved := &dialog.Episode{Oracle: *o, Messages: cat(all(), []dialog.Message{a("The answer is " + o.Truth + ".")}), Success: true, End: dialog.Solved}
	if got := ClassifyFailure(solved); got != nil {
		t.Errorf("a solved conversation: %q", got)
	}
}

// On the scripted agents' conversations with the human proxy, each
// profile fails the way its description says: the guesser by never
// asking, the answer-seeker without asking either, careful and sloppy
// after every number was told.
func TestClassifyFailureReadsTheProfiles(t *testing.T) {
	tk, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	const n = 150
	for _, c := range []struct {
		profile string
		class   Failure
		atLeast float64 // share of the profile's failures in class
	}{
		{"guesser", NeverAsks, 0.9},
		{"answer-seeker", NeverAsks, 0.9},
		{"vague", AsksTold, 0.5},
	} {
		agent, err := tk.Agent(c.profile)
		if err != nil {
			t.Fatal(err)
		}
		failed, in := 0, 0
		for i := range n {
			o, v, err := tk.Instance("test", i)
			if err != nil {
				t.Fatal(err)
			}
			ep := tasktest.MustPlay(t, tk, o, v, Human{}, agent, uint64(i), 8)
			got := ClassifyFailure(&ep)
			if ep.Success != (got == nil) {
				t.Fatalf("%s %d: success %v, classes %q", c.profile, i, ep.Success, got)
			}
			if ep.Success {
				continue
			}
			failed++
			if slices.Contains(got, c.class) {
				in++
			}
		}
		if failed == 0 {
			t.Logf("%s: no failure in %d", c.profile, n)
			continue
		}
		if share := float64(in) / float64(failed); share < c.atLeast {
			t.Errorf("%s: %d of %d failures are %q (%.2f), want at least %.2f", c.profile, in, failed, c.class, share, c.atLeast)
		}
		t.Logf("%s: %d failures of %d, %d %q", c.profile, failed, n, in, c.class)
	}
}

// carries finds a value as a number of its own only.
func TestCarries(t *testing.T) {
	for _, c := range []struct {
		msg, value string
		want       bool
	}{
		{"It was 4.", "4", true},
		{"I think it was 4, let me check... yes, 4.", "4", true},
		{"There are 14 apples.", "4", false},
		{"It costs 4.5 dollars.", "4", false},
		{"It costs 4.5 dollars.", "4.5", true},
		{"Which number do you mean?", "4", false},
		{"", "4", false},
		{"4", "", false},
	} {
		if got := carries(c.msg, c.value); got != c.want {
			t.Errorf("carries(%q, %q) = %v, want %v", c.msg, c.value, got, c.want)
		}
	}
}

// Any transcript classifies without a panic, and only a failed one has
// classes, each of them a listed one.
func FuzzClassifyFailure(f *testing.F) {
	f.Add("How many apples?", "It was 4.", "The answer is 12.", false)
	f.Add("The answer is 1/2.", "No.", "The answer is 0.5.", true)
	tk, err := New(DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	o, _, err := tk.Instance("test", 3)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a1, u1, a2 string, success bool) {
		ep := &dialog.Episode{Oracle: *o, Success: success, End: dialog.MaxTurns, Messages: []dialog.Message{
			{Role: dialog.RoleUser, Content: o.Opening}, {Role: dialog.RoleAssistant, Content: a1},
			{Role: dialog.RoleUser, Content: u1}, {Role: dialog.RoleAssistant, Content: a2}}}
		got := ClassifyFailure(ep)
		if success != (got == nil) {
			t.Fatalf("success %v, classes %q", success, got)
		}
		for _, c := range got {
			if !slices.Contains(Failures, c) {
				t.Fatalf("unlisted class %q", c)
			}
		}
	})
}
