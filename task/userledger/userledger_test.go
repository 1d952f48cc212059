package userledger

import (
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// asksByCue is a reader for the tests: an agent turn asks about the fact
// one of whose cue words it holds.
func asksByCue(o *dialog.Oracle, msgs []dialog.Message) (dialog.Fact, bool) {
	turn := strings.ToLower(msgs[len(msgs)-1].Content)
	for _, f := range o.Facts {
		for _, c := range f.Cues {
			if strings.Contains(turn, c) {
				return f, true
			}
		}
	}
	return dialog.Fact{}, false
}

var oracle = &dialog.Oracle{Facts: []dialog.Fact{
	{Key: "order", Text: "The order is O-412.", Value: "O-412", Cues: []string{"order"}, Hidden: true},
	{Key: "name", Text: "My name is Ada.", Value: "Ada", Cues: []string{"name"}},
}}

func conv(roles string, texts ...string) []dialog.Message {
	msgs := make([]dialog.Message, len(texts))
	for i, t := range texts {
		msgs[i] = dialog.Message{Role: map[byte]dialog.Role{'u': dialog.RoleUser, 'a': dialog.RoleAssistant, 's': dialog.RoleSystem}[roles[i]], Content: t}
	}
	return msgs
}

// The note follows an agent turn that asks about a hidden fact, and states
// it whole after the prefix; a turn about a fact the opening gives, a turn
// that asks nothing, a user's or an environment's message last, and no
// conversation get none.
func TestNotesFollowAskingAgentTurns(t *testing.T) {
	notes := Notes(asksByCue)
	for _, c := range []struct {
		name string
		msgs []dialog.Message
		want string
	}{
		{"asks the hidden order", conv("ua", "Hi.", "Which order is it?"), "Asked about: The order is O-412."},
		{"asks again later", conv("uaua", "Hi.", "Hello.", "Sure.", "And the order?"), "Asked about: The order is O-412."},
		{"asks a given fact", conv("ua", "Hi.", "What is your name?"), ""},
		{"asks nothing", conv("ua", "Hi.", "Let me look."), ""},
		{"the user replied", conv("uau", "Hi.", "Which order is it?", "The order is O-412."), ""},
		{"an environment note last", conv("uas", "Hi.", "Which order is it?", "(order O-412 looked up)"), ""},
		{"no conversation", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := notes(oracle, c.msgs); got != c.want {
				t.Errorf("note %q, want %q", got, c.want)
			}
		})
	}
}

// Copies counts the replies to asking turns and those that state the
// asked value verbatim, past environment notes; a turn with no reply, and
// turns about given facts, are not counted.
func TestCopiesCountsExactReplies(t *testing.T) {
	msgs := conv("uasu"+"au"+"au"+"au"+"a",
		"Hi.", "Which order?", "(order looked up)", "It's O-412.",
		"The order again?", "O-421, I think.",
		"What is your name?", "Ada.",
		"Let me look.", "Okay.",
		"And the order?")
	n, exact := Copies(asksByCue, oracle, msgs)
	if n != 2 || exact != 1 {
		t.Errorf("Copies = %d asked, %d exact; want 2 and 1", n, exact)
	}
}
