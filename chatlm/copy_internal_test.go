package chatlm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// The constraint allows exactly the tokens that keep every number of the
// turn one the problem holds, digit by digit, with a '.' that may end a
// sentence after a held number or continue one.
func TestNumberCopierAllows(t *testing.T) {
	text := []string{"", "a", " ", ".", "/", ". ", "x1"}
	for d := range 10 {
		text = append(text, string(rune('0'+d)))
	}
	tokens := sortCopyTokens(text)
	o := &dialog.Oracle{Instruction: "the booking A-921 on 2026-06-11", Truth: "2.5", Facts: []dialog.Fact{{Key: "share", Value: "3/4"}}}
	allowed := allowedTexts(newNumberCopier(tokens, o), text)
	ends := []string{"", "_", "a", ".", "._", "/"} // the tokens that end a number: plain ones and the separators
	for _, c := range []struct{ so, want string }{
		// Starting a number: only digits a held number begins with
		// (921, 2026, 06, 11, 2.5, 3/4: "2026-06-11" holds 06); a token
		// holding a digit is judged by its digit.
		{"it is ", tokenSet(append(ends, "0", "1", "2", "3", "9", "x1")...)},
		// Inside one: the digit that continues it; no ending.
		{"A-9", tokenSet("2")},
		{"A-92", tokenSet("1")},
		// A held number may end, and may not go on to one not held.
		{"A-921", tokenSet(append(ends, "x1")...)},
		{"on 202", tokenSet("6")},
		// "2" is not held, "2.5" and 2026 are: its '.' may continue it,
		// nothing ends it.
		{"about 2", tokenSet("0", ".")},
		{"about 2.", tokenSet("5")},
		// 921 is held: its '.' may end a sentence; then a digit may not
		// follow (no held 921.x).
		{"A-921.", tokenSet(append(ends, "x1")...)},
		{"3/", tokenSet("4")},
		{"on 2026-06", tokenSet(append(ends, "x1")...)},
	} {
		if got := allowed(c.so); got != c.want {
			t.Errorf("after %q: allowed %s, want %s", c.so, got, c.want)
		}
	}
}

// The values constraint allows exactly the tokens that keep every value of
// the turn (a run with a digit or an '@') a whole one the problem holds,
// character by character; words stay free, and a word may turn into a
// value only as the beginning of a held one.
func TestValueCopierAllows(t *testing.T) {
	text := []string{"", " ", ",", ".", "-", "a", "e", "l", "mail", "omar", "84", "@", "inbox", "org", " 2", "1", "2", "6", "A", "-9", "2026", "-06", "-11"}
	tokens := sortValueTokens(text, nil)
	o := &dialog.Oracle{
		Instruction: "Cancel order A-921 and move booking B-12 to 2026-06-11.",
		Facts:       []dialog.Fact{{Key: "email", Value: "omar84@inbox.org"}},
	}
	allowed := allowedTexts(newValueCopier(tokens, o), text)
	words := []string{"", "_", ",", ".", "-", "a", "e", "l", "mail", "omar", "inbox", "org", "A"} // every token without a digit or an '@'
	for _, c := range []struct{ so, want string }{
		// Between words, a value may begin with any held value's first
		// characters (2026-06-11 begins with "2"; none with "1", "6",
		// "84" or "@"; "-9" reads as 9, no held value's beginning).
		{"it is ", tokenSet(append(words, "_2", "2", "2026")...)},
		// A word may become a held value's beginning, not another one.
		{"my email is omar", tokenSet(append(words, "84", "_2")...)},
		{"a follow", tokenSet(append(words, "_2")...)},
		// Inside a value: only what continues it; "@" then "inbox".
		{"omar84", tokenSet("@")},
		{"omar84@", tokenSet("inbox")},
		{"omar84@inbox", tokenSet(".")},
		{"omar84@inbox.", tokenSet("org")},
		// A whole held value may end (a '.' may end the sentence, or
		// begin a longer held one: none here).
		{"omar84@inbox.org", tokenSet("", "_", ",", ".", "_2")},
		{"order A", tokenSet(append(words, "-9", "_2")...)},
		{"order A-9", tokenSet("2")},
		{"order A-92", tokenSet("1")},
		{"on 2026", tokenSet("-", "-06")},
		{"on 2026-06", tokenSet("-", "-11")},
		{"on 2026-06-11", tokenSet("", "_", ",", ".", "_2")},
		// A value the constraint did not write (the opening's fallback):
		// no token continues it to a held one, so any goes.
		{"x9", "any"},
	} {
		if got := allowed(c.so); got != c.want {
			t.Errorf("after %q: allowed %s, want %s", c.so, got, c.want)
		}
	}
	held := o.HeldValues()
	for _, v := range []string{"A-921", "B-12", "2026-06-11", "omar84@inbox.org"} {
		if !held[v] {
			t.Errorf("HeldValues %v lacks %q", held, v)
		}
	}
	if len(held) != 4 {
		t.Errorf("HeldValues = %v, want the four values and no word", held)
	}
}

// allowedTexts is c's allowed tokens after a turn's text so far, as their
// texts sorted and joined by commas (spaces written "_"), "any" for no
// restriction.
func allowedTexts(c copier, text []string) func(so string) string {
	return func(so string) string {
		ids := c.allow(so)
		if ids == nil {
			return "any"
		}
		if !slices.IsSorted(ids) {
			return "unsorted ids" // restriction sorts them once for every draw
		}
		var out []string
		for _, id := range ids {
			out = append(out, strings.ReplaceAll(text[id], " ", "_"))
		}
		return tokenSet(out...)
	}
}

// tokenSet is token texts sorted and joined by commas, as allowedTexts
// writes them.
func tokenSet(s ...string) string {
	s = slices.Clone(s)
	slices.Sort(s)
	return strings.Join(s, ",")
}

// valueRunEnd finds the run dialog.ValueRun's last match would, and
// isValueByte agrees with ValueRun on every byte.
func TestValueRunEnd(t *testing.T) {
	for _, text := range []string{"", " ", "my email is omar84@inbox.org", "A-921.", "é A-9", "x, ", "2026-06-11,", "ümlaut"} {
		want := ""
		if locs := dialog.ValueRun.FindAllStringIndex(text, -1); len(locs) > 0 && locs[len(locs)-1][1] == len(text) {
			want = text[locs[len(locs)-1][0]:]
		}
		if got := valueRunEnd(text); got != want {
			t.Errorf("valueRunEnd(%q) = %q, want %q", text, got, want)
		}
	}
	for c := range 256 {
		if got, want := isValueByte(byte(c)), dialog.ValueRun.MatchString(string([]byte{byte(c)})); got != want {
			t.Errorf("isValueByte(%q) = %v, ValueRun says %v", rune(c), got, want)
		}
	}
}

// With value words (support's names), a run that is one must begin a held
// value, open or closed: the held email's name may be stated, another
// name not, whole or grown from a shorter word.
func TestValueCopierHoldsValueWords(t *testing.T) {
	text := []string{"", " ", ".", "yu", "ki", "yuki", " yuki", "lena", " lena", "82", "@", "post", "net", "s"}
	tokens := sortValueTokens(text, []string{"yuki", "lena"})
	o := &dialog.Oracle{Facts: []dialog.Fact{{Key: "email", Value: "lena82@post.net"}}}
	allowed := allowedTexts(newValueCopier(tokens, o), text)
	others := []string{"", "_", ".", "yu", "s", "post", "net"} // neither a value nor a value word, whatever comes before
	for _, c := range []struct{ so, want string }{
		// The held name may begin, another may not, as a token or grown
		// from "yu".
		{"The new email is ", tokenSet(append(others, "lena", "_lena", "ki")...)},
		{"The new email is yu", tokenSet("", "_", ".", "yu", "s", "post", "net", "_lena", "lena", "yuki")},
		// The held name may close (a prefix of the held email), end a
		// sentence, go on to its digits, or grow into a word that is no
		// name.
		{"It is lena", tokenSet("", "_", ".", "82", "_lena", "ki", "lena", "net", "post", "s", "yu", "yuki")},
		{"It is lena82", tokenSet("@")},
	} {
		if got := allowed(c.so); got != c.want {
			t.Errorf("after %q: allowed %s, want %s", c.so, got, c.want)
		}
	}
}

// Judging only the runs that may grow into a value word allows the same
// tokens as judging every token after every run (as allow did on a task
// with value words): checked after every prefix of turns and of random
// strings of value characters, words, edge characters and spaces.
func TestValueCopierSkipsOnlyWhatCannotMatter(t *testing.T) {
	text := []string{"", " ", ".", "-", "_", "@", "l", "le", "na", "lena", " lena", "ena", "yu", "ki", "yuki", " yuki", ".yu",
		"82", "8", "2@", "post", ".net", "net", " is", "The", " new", " email", " I", "lenas", "a", "k", "i", " ."}
	tokens := sortValueTokens(text, []string{"yuki", "lena"})
	o := &dialog.Oracle{Facts: []dialog.Fact{{Key: "email", Value: "lena82@post.net"}, {Key: "id", Value: "A-921"}}}
	c := newValueCopier(tokens, o)
	judgeAll := func(so string) []int { return c.judgeAll(so) }
	set := func(ids []int) string {
		if ids == nil {
			return "all"
		}
		s := slices.Clone(ids)
		slices.Sort(s)
		return fmt.Sprint(s)
	}
	var turns []string
	for _, turn := range []string{"The new email is lena82@post.net.", "The new email is yuki", "It is .lena and -yu then A-921.", "le na lenas .yu"} {
		for i := 0; i <= len(turn); i++ {
			turns = append(turns, turn[:i])
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"l", "e", "n", "a", "y", "u", "k", "i", ".", "-", "_", " ", "8", "@", "lena", "yu", "x"}
	for range 400 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		turns = append(turns, b.String())
	}
	for _, so := range turns {
		if got, want := set(c.allow(so)), set(judgeAll(so)); got != want {
			t.Errorf("after %q: allowed %s, judging every token %s", so, got, want)
		}
	}
}

// judgeAll is allow judging every token after every run, as allow did on
// a task with value words before mayGrowWord: the reference the skip is
// checked and timed against.
func (c *valueCopier) judgeAll(text string) []int {
	run := valueRunEnd(text)
	fits := func(x string) bool { return c.fits(run, x) }
	var ids []int
	if c.fits(run, "") {
		ids = append(ids, c.tokens.plain...)
	}
	ids = appendFitting(ids, c.tokens.going, c.tokens.text, fits)
	ids = appendFitting(ids, c.tokens.stating, c.tokens.text, fits)
	return restriction(ids, len(c.tokens.text))
}

// BenchmarkValueCopierTurn times the values constraint over one support
// turn, a fresh conversation's copier each time (its cache empty), on a
// vocabulary of word pieces, digits and value pieces with support's twelve value
// words: allow as it is against judging every token after every run.
func BenchmarkValueCopierTurn(b *testing.B) {
	words := strings.Fields("the a to and is it you that for on are with as be at this have from or by one all we can out if about which do their will way many then them would like so these her make see him has look more day could come did my over know than call first who may down side been now find any new work part take get place made live where after back little only round man year came show every good give our under name very through just form great think say help low line differ turn cause much mean before move right boy old too same tell does set three want air well also play small end put home read hand port large spell add even land here must big high such follow act why ask men change went light kind off need house picture try again animal point mother world near build self earth father email account order date thanks please")
	names := []string{"dana", "omar", "lena", "raj", "mia", "tom", "ines", "yuki", "sam", "eva", "noah", "ada"}
	seen := map[string]bool{}
	var text []string
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			text = append(text, t)
		}
	}
	for _, w := range append(words, names...) {
		for i := 1; i <= len(w); i++ {
			add(w[:i])
			add(" " + w[:i])
			add(w[i-1:])
		}
	}
	for i := range 100 {
		add(fmt.Sprint(i))
	}
	for _, p := range []string{".", ",", "@", "-", "_", " ", ".net", ".org", "@post", "A-", "B-"} {
		add(p)
	}
	tokens := sortValueTokens(text, names)
	o := &dialog.Oracle{Facts: []dialog.Fact{{Key: "email", Value: "lena82@post.net"}, {Key: "id", Value: "A-921"}, {Key: "date", Value: "2024-03-18"}}}
	turn := "Hi, my account id is A-921 and the order came on 2024-03-18. Please make the new email lena82@post.net, thanks a lot for the help today."
	for _, c := range []struct {
		name  string
		allow func(c *valueCopier, so string) []int
	}{{"skip", (*valueCopier).allow}, {"judge-all", (*valueCopier).judgeAll}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				vc := newValueCopier(tokens, o)
				for i := 0; i <= len(turn); i++ {
					c.allow(vc, turn[:i])
				}
			}
		})
	}
}
