package dialog

import (
	"reflect"
	"testing"
)

func TestAgentChat(t *testing.T) {
	history := []Message{
		{Role: RoleUser, Content: "fix the date", Tokens: 3},
		{Role: RoleAssistant, Content: `Change "Monday" to "Friday".`, Tokens: 7},
		{Role: RoleSystem, Content: "Current document:\nThe meeting is on Friday."},
		{Role: RoleUser, Content: "thanks"},
	}
	for _, tt := range []struct {
		name string
		v    View
		sys  string
	}{
		{"instructions", View{Task: "mathchat", Instructions: "Help the user."}, "Help the user."},
		{"draft", View{Task: "docedit", Instructions: "Edit the draft.", Draft: "The meeting is on Monday."},
			"Edit the draft.\nDraft:\nThe meeting is on Monday."},
		{"empty", View{}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := []Message{
				{Role: RoleSystem, Content: tt.sys},
				{Role: RoleUser, Content: "fix the date"},
				{Role: RoleAssistant, Content: `Change "Monday" to "Friday".`},
				{Role: RoleSystem, Content: "Current document:\nThe meeting is on Friday."},
				{Role: RoleUser, Content: "thanks"},
			}
			if got := AgentChat(&tt.v, history); !reflect.DeepEqual(got, want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, want)
			}
			if got := AgentChat(&tt.v, nil); !reflect.DeepEqual(got, want[:1]) {
				t.Errorf("no history: got %+v, want %+v", got, want[:1])
			}
		})
	}
}
