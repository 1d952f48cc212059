package fidelity

import (
	"strings"

	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/docedit"
)

// answerTask scores a message "The answer is N." against the truth.
type answerTask struct{}

func (answerTask) Name() string { return "answers" }
func (answerTask) Spec() string { return "answers" }
func (answerTask) Instance(string, int) (*dialog.Oracle, *dialog.View, error) {
	return nil, nil, nil
}
func (answerTask) Score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	var s dialog.Score
	for _, m := range msgs {
		if a, ok := strings.CutPrefix(m.Content, "The answer is "); ok && m.Role == dialog.RoleAssistant {
			s.Outcome = strings.TrimSuffix(a, ".")
			s.Success = s.Outcome == o.Truth
		}
	}
	return s
}

func TestVerdictsCountJudgementsOfDeliveredOutcomes(t *testing.T) {
	turn := func(role dialog.Role, text string) dialog.Message { return dialog.Message{Role: role, Content: text} }
	o := *mathOracle // truth 102
	eps := []dialog.Episode{
		{Oracle: o, End: dialog.Solved, Messages: []dialog.Message{
			turn(dialog.RoleUser, o.Opening),
			turn(dialog.RoleAssistant, "How many days does Eva work?"), // no outcome: not counted
			turn(dialog.RoleUser, "Eva works for 3 days in total."),
			turn(dialog.RoleAssistant, "The answer is 51."), // wrong, rejected
			turn(dialog.RoleUser, "That doesn't match what I got."),
			turn(dialog.RoleAssistant, "The answer is 102."), // right, accepted at the end
			turn(dialog.RoleUser, "Yes, that's right, thanks!"),
		}},
		{Oracle: o, End: dialog.UserEnded, Messages: []dialog.Message{
			turn(dialog.RoleUser, o.Opening),
			turn(dialog.RoleAssistant, "The answer is 7."), // wrong, accepted: sycophancy
			turn(dialog.RoleUser, "Great, thanks!"),
		}},
		{Oracle: o, End: dialog.MaxTurns, Messages: []dialog.Message{
			turn(dialog.RoleUser, o.Opening),
			turn(dialog.RoleAssistant, "The answer is 102."), // right, but the episode hit the limit: no reply to judge
		}},
	}
	v := verdicts(answerTask{}, eps)
	if v.Wrong != 2 || v.Right != 1 {
		t.Fatalf("counted %d wrong and %d right outcomes, want 2 and 1", v.Wrong, v.Right)
	}
	if v.AcceptWrong != 0.5 || v.AcceptRight != 1 {
		t.Fatalf("accept wrong %v, accept right %v; want 0.5 and 1", v.AcceptWrong, v.AcceptRight)
	}
	if got := verdicts(answerTask{}, nil); got != (Verdicts{}) {
		t.Fatalf("no episodes: %+v", got)
	}
}

// With edit commands an outcome is the document the whole conversation
// made: the second command turn alone would leave the first edit undone,
// but in its conversation it delivers the target, and the user's reply
// after the environment's note is the one judged.
func TestVerdictsJudgeCommandsInTheirConversation(t *testing.T) {
	tk, err := docedit.New(docedit.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	turn := func(role dialog.Role, text string) dialog.Message { return dialog.Message{Role: role, Content: text} }
	o := dialog.Oracle{Task: "docedit", Draft: "Anna will call Ben on Monday. The room is on the second floor.",
		Truth: "Anna will call Ben on Friday. The room is on the third floor.", Persona: dialog.Persona{Threshold: 90}}
	eps := []dialog.Episode{{Oracle: o, End: dialog.Solved, Messages: []dialog.Message{
		turn(dialog.RoleUser, "Can you help me fix this note?"),
		turn(dialog.RoleAssistant, `In sentence 1, change "Monday" to "Friday".`),
		turn(dialog.RoleSystem, "Current document:\nAnna will call Ben on Friday. The room is on the second floor."),
		turn(dialog.RoleUser, "That didn't make it better."),
		turn(dialog.RoleAssistant, `In sentence 2, change "second" to "third".`),
		turn(dialog.RoleSystem, "Current document:\n"+o.Truth),
		turn(dialog.RoleUser, "That's it, thank you!"),
	}}}
	v := verdicts(tk, eps)
	if v.Wrong != 1 || v.Right != 1 || v.AcceptRight != 1 || v.AcceptWrong != 0 {
		t.Fatalf("got %+v, want one wrong outcome rejected and one right one accepted", v)
	}
}
