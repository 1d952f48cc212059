package mathchat

import (
	"math/big"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("bad rat " + s)
	}
	return r
}

func TestParseNumber(t *testing.T) {
	cases := []struct {
		in      string
		want    string // rational; "" means no number
		percent bool
	}{
		{"17", "17", false},
		{"-3", "-3", false},
		{" 42 ", "42", false},
		{"1,200", "1200", false},
		{"$1,200.50", "2401/2", false},
		{"$ 3", "3", false},
		{"-$5", "-5", false},
		{"2.5", "5/2", false},
		{".5", "1/2", false},
		{"3/4", "3/4", false},
		{"3 / 4", "3/4", false},
		{"2 1/2", "5/2", false},
		{"25%", "25", true},
		{"12.5 percent", "25/2", true},
		{`\frac{1}{2}`, "1/2", false},
		{`\dfrac{10}{4}`, "5/2", false},
		{`\$12`, "12", false},
		{"1,000,000", "1000000", false},
		{"−7", "-7", false},
		{"1,20", "", false},
		{"abc", "", false},
		{"3/0", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			n, ok := ParseNumber(c.in)
			if c.want == "" {
				if ok {
					t.Fatalf("got %v, want no number", n.Value)
				}
				return
			}
			if !ok {
				t.Fatalf("got no number, want %s", c.want)
			}
			if n.Value.Cmp(rat(c.want)) != 0 || n.Percent != c.percent {
				t.Fatalf("got %v percent=%v, want %s percent=%v", n.Value, n.Percent, c.want, c.percent)
			}
		})
	}
}

func TestExtractAnswer(t *testing.T) {
	cases := []struct {
		msg  string
		want string // "" means no answer statement
	}{
		{"The answer is 17.", "17"},
		{"4 × 3 = 12. 12 + 5 = 17. The answer is 17.", "17"},
		{"The answer is 10. No wait, the answer is 12.", "12"},
		{`So we get \boxed{42}.`, "42"},
		{`\boxed{\frac{3}{4}}`, "3/4"},
		{`The answer is \boxed{2 1/2}`, "5/2"},
		{"Final answer: $1,200.50", "2401/2"},
		{"The answer would be about 3/4 of a cup.", "3/4"},
		{"The answer is **12**.", "12"},
		{"The answer is 12 km.", "12"},
		{"So the total is 5 + 7 = 12", "12"},
		{"So the total is 5 + 7 = 12 apples.", "12"},
		{"= 3.5", "7/2"},
		{"The answer is 25%.", "25"},
		{"the answer is -4", "-4"},
		{"answer = 9", "9"},
		// Not answer statements.
		{"How many apples did Tom buy?", ""},
		{"What is the answer?", ""},
		{"I don't know the answer. That is 5 apples ago.", ""},
		{"5 + 7 = 12. Now how many pens?", ""},
		{"The answer isn't 5.", ""},
	}
	for _, c := range cases {
		t.Run(c.msg, func(t *testing.T) {
			a, ok := ExtractAnswer(c.msg)
			if c.want == "" {
				if ok {
					t.Fatalf("got %v (%q), want no answer", a.Value, a.Text)
				}
				return
			}
			if !ok || a.Value.Cmp(rat(c.want)) != 0 {
				t.Fatalf("got %v ok=%v, want %s", a.Value, ok, c.want)
			}
		})
	}
}

func TestFinalAnswerRule(t *testing.T) {
	msg := func(r dialog.Role, s string) dialog.Message { return dialog.Message{Role: r, Content: s} }
	cases := []struct {
		name string
		msgs []dialog.Message
		want string
	}{
		{"last answer-bearing message wins", []dialog.Message{
			msg(dialog.RoleUser, "help"), msg(dialog.RoleAssistant, "The answer is 3."),
			msg(dialog.RoleUser, "no"), msg(dialog.RoleAssistant, "The answer is 4."),
		}, "4"},
		{"a later question does not cancel it", []dialog.Message{
			msg(dialog.RoleAssistant, "The answer is 3."), msg(dialog.RoleUser, "ok"),
			msg(dialog.RoleAssistant, "Anything else I can help with?"),
		}, "3"},
		{"user messages never count", []dialog.Message{
			msg(dialog.RoleAssistant, "What is it?"), msg(dialog.RoleUser, "The answer is 9."),
		}, ""},
		{"last statement within the message", []dialog.Message{
			msg(dialog.RoleAssistant, "2 + 2 = 4. The answer is 4. Sorry, the answer is 5."),
		}, "5"},
		{"no answer", []dialog.Message{msg(dialog.RoleAssistant, "How many pens?")}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, ok := FinalAnswer(c.msgs)
			if c.want == "" {
				if ok {
					t.Fatalf("got %v, want none", a.Value)
				}
				return
			}
			if !ok || a.Value.Cmp(rat(c.want)) != 0 {
				t.Fatalf("got %v ok=%v, want %s", a.Value, ok, c.want)
			}
		})
	}
}

func TestEqual(t *testing.T) {
	cases := []struct {
		truth, said string
		want        bool
	}{
		{"17", "The answer is 17.", true},
		{"17", "The answer is 17.0.", true},
		{"17", "The answer is 16.", false},
		{"5/2", "The answer is 2 1/2.", true},
		{"5/2", "The answer is 2.5.", true},
		{"5/2", `\boxed{\frac{5}{2}}`, true},
		{"25", "The answer is 25%.", true},
		{"1/4", "The answer is 25%.", true},
		{"1200", "The answer is $1,200.", true},
		{"1200", "The answer is 1,200.01.", false},
	}
	for _, c := range cases {
		a, ok := ExtractAnswer(c.said)
		if !ok {
			t.Fatalf("%q: no answer", c.said)
		}
		if got := Equal(rat(c.truth), a); got != c.want {
			t.Errorf("Equal(%s, %q) = %v, want %v", c.truth, c.said, got, c.want)
		}
	}
}

func TestFormatRoundTrip(t *testing.T) {
	for _, s := range []string{"0", "17", "-3", "5/2", "-5/2", "7/3", "1/8", "2401/2", "1234567/100", "-1/3"} {
		r := rat(s)
		forms := []string{FormatRat(r), FormatMixed(r), r.RatString()}
		if new(big.Rat).Mul(r, big.NewRat(100, 1)).IsInt() {
			forms = append(forms, FormatMoney(r))
		}
		for _, f := range forms {
			n, ok := ParseNumber(f)
			if !ok || n.Value.Cmp(r) != 0 {
				t.Errorf("%s written %q read back as %v (ok=%v)", s, f, n.Value, ok)
			}
		}
	}
	if got := FormatMoney(rat("2401/2")); got != "$1,200.50" {
		t.Errorf("FormatMoney(1200.5) = %q, want $1,200.50", got)
	}
	if got := FormatMixed(rat("-5/2")); got != "-2 1/2" {
		t.Errorf("FormatMixed(-5/2) = %q, want -2 1/2", got)
	}
}

func TestNumbersInText(t *testing.T) {
	got := Numbers("Tom is a 5-year-old with $1,200.50 and 3/4 of 2 1/2 pies, 25% off, -4 degrees.")
	want := []string{"5", "2401/2", "3/4", "5/2", "25", "-4"}
	if len(got) != len(want) {
		t.Fatalf("got %d numbers %v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		if got[i].Value.Cmp(rat(w)) != 0 {
			t.Errorf("number %d: got %v (%q), want %s", i, got[i].Value, got[i].Text, w)
		}
	}
}

func FuzzExtractAnswer(f *testing.F) {
	for _, s := range []string{"The answer is 17.", `\boxed{\frac{1}{2}}`, "= 3", "answer: $1,200.50", "2 1/2", "The answer is 9/0.", strings.Repeat("9", 500)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		if a, ok := ExtractAnswer(msg); ok && a.Value == nil {
			t.Fatalf("answer without a value from %q", msg)
		}
		for _, n := range Numbers(msg) {
			if n.Value == nil {
				t.Fatalf("number without a value from %q", msg)
			}
		}
		ParseNumber(msg)
	})
}

func FuzzNumberRoundTrip(f *testing.F) {
	f.Add(int64(17), int64(1))
	f.Add(int64(-5), int64(2))
	f.Add(int64(120050), int64(100))
	f.Add(int64(7), int64(3))
	f.Fuzz(func(t *testing.T, num, den int64) {
		if den == 0 {
			return
		}
		r := big.NewRat(num, den)
		forms := []string{FormatRat(r), FormatMixed(r), r.RatString(), "The answer is " + FormatRat(r) + ".", `\boxed{` + FormatMixed(r) + `}`}
		if new(big.Rat).Mul(r, big.NewRat(100, 1)).IsInt() {
			forms = append(forms, FormatMoney(r))
		}
		for _, s := range forms {
			a, ok := ExtractAnswer("= " + s)
			if strings.HasPrefix(s, "The") || strings.HasPrefix(s, `\boxed`) {
				a, ok = ExtractAnswer(s)
			}
			if !ok || a.Value.Cmp(r) != 0 {
				t.Fatalf("%v written %q read back as %v (ok=%v)", r, s, a.Value, ok)
			}
		}
	})
}
