package export

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/reply"
)

func episodes() []dialog.Episode {
	o := dialog.Oracle{Task: "guess", ID: "guess/train/0", Split: "train", Instruction: "my number is 7", Opening: "guess my number", Truth: "7"}
	v := dialog.View{Task: "guess", Instructions: "Find the number."}
	msg := func(r dialog.Role, c string) dialog.Message { return dialog.Message{Role: r, Content: c} }
	return []dialog.Episode{
		{ID: "guess/train/0/0", Task: "guess", Split: "train", Agent: "scripted:x", User: "human", Oracle: o, View: v,
			Messages: []dialog.Message{msg("user", "guess my number"), msg("assistant", "5"), msg("user", "higher"), msg("assistant", "7"), msg("user", "yes!")},
			Reward:   1, Success: true, End: dialog.Solved, Turns: 2},
		{ID: "guess/train/1/0", Task: "guess", Split: "train", Index: 1, Agent: "scripted:x", User: "human", Oracle: o, View: v,
			Messages: []dialog.Message{msg("user", "guess my number"), msg("assistant", "1")},
			End:      dialog.GaveUp, Turns: 1},
		{ID: "guess/train/2/0", Task: "guess", Split: "train", Index: 2, Agent: "scripted:x", User: "human", Oracle: o, View: v,
			Messages: []dialog.Message{msg("user", "guess my number"), msg("assistant", "2"), msg("user", "higher")},
			End:      dialog.MaxTurns, Turns: 1},
	}
}

func TestSimRowsFlipRolesAndMarkEnds(t *testing.T) {
	rows := SimRows(episodes())
	if len(rows) != 3 {
		t.Fatalf("got %d rows, want 3", len(rows))
	}
	r := rows[0].Messages
	if r[0].Role != "system" || !strings.Contains(r[0].Content, "never to be revealed") || !strings.Contains(r[0].Content, "7") {
		t.Errorf("got system %q, want the oracle context", r[0].Content)
	}
	wantRoles := []string{"system", "user", "assistant", "user", "assistant", "user", "assistant"}
	var roles []string
	for _, m := range r {
		roles = append(roles, m.Role)
	}
	if !reflect.DeepEqual(roles, wantRoles) {
		t.Errorf("got roles %v, want %v", roles, wantRoles)
	}
	ends := func(row ChatRow) []reply.User {
		var out []reply.User
		for _, m := range row.Messages {
			if m.Role == "assistant" {
				rep, err := reply.ParseUser(m.Content)
				if err != nil {
					t.Fatalf("assistant turn %q does not parse: %v", m.Content, err)
				}
				out = append(out, rep)
			}
		}
		return out
	}
	tests := []struct {
		row  int
		want []reply.User
	}{
		{0, []reply.User{{Message: "guess my number"}, {Message: "higher"}, {Message: "yes!", End: true, Satisfied: true}}},
		{1, []reply.User{{Message: "guess my number"}, {End: true}}},
		{2, []reply.User{{Message: "guess my number"}, {Message: "higher"}}},
	}
	for _, tt := range tests {
		if got := ends(rows[tt.row]); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("row %d: got replies %+v, want %+v", tt.row, got, tt.want)
		}
	}
}

func TestPolicyAndRolloutRows(t *testing.T) {
	eps := episodes()
	if got := len(PolicyRows(eps, false)); got != 3 {
		t.Errorf("got %d policy rows, want 3", got)
	}
	if got := len(PolicyRows(eps, true)); got != 1 {
		t.Errorf("got %d successful policy rows, want 1", got)
	}
	rows := RolloutRows(eps, false)
	if len(rows) != 4 {
		t.Fatalf("got %d rollout rows, want 4 (one per agent turn)", len(rows))
	}
	r := rows[1]
	if r.Response != "7" || r.Turn != 2 || r.Reward != 1 || r.RewardModel.GroundTruth != "7" || len(r.Prompt) != 4 || r.Prompt[3].Content != "higher" {
		t.Errorf("got row %+v, want turn 2 answering 7 after 'higher'", r)
	}
	for _, m := range r.Prompt {
		if strings.Contains(m.Content, "my number is 7") {
			t.Errorf("prompt leaks the oracle: %q", m.Content)
		}
	}
}

func TestWriteRoundTrips(t *testing.T) {
	dir := t.TempDir()
	eps := episodes()
	for _, kind := range []string{KindSim, KindPolicy, KindRollouts, KindPrompts} {
		for _, format := range []string{FormatChatJSONL, FormatParquet} {
			t.Run(kind+"/"+format, func(t *testing.T) {
				path := filepath.Join(dir, kind+"."+format)
				n, err := Write(path, eps, Options{Kind: kind, Format: format})
				if err != nil {
					t.Fatal(err)
				}
				var got int
				switch {
				case format == FormatParquet && kind == KindRollouts:
					rows, err := parquet.ReadFile[RolloutRow](path)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(rows, RolloutRows(eps, false)) {
						t.Errorf("parquet rows differ from what was written")
					}
					got = len(rows)
				case format == FormatParquet && kind == KindPrompts:
					rows, err := parquet.ReadFile[PromptRow](path)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(rows, PromptRows(eps)) {
						t.Errorf("parquet rows differ from what was written")
					}
					got = len(rows)
				case format == FormatParquet:
					rows, err := parquet.ReadFile[ChatRow](path)
					if err != nil {
						t.Fatal(err)
					}
					got = len(rows)
					if len(rows[0].Messages) < 2 {
						t.Errorf("got %d messages in the first row", len(rows[0].Messages))
					}
				default:
					f, _ := os.Open(path)
					defer f.Close()
					sc := bufio.NewScanner(f)
					sc.Buffer(nil, 1<<20)
					for sc.Scan() {
						var row map[string]any
						if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
							t.Fatal(err)
						}
						if (kind == KindSim || kind == KindPolicy) && len(row) != 1 {
							t.Errorf("got keys %v, want only messages", row)
						}
						got++
					}
				}
				if got != n {
					t.Errorf("read %d rows, wrote %d", got, n)
				}
			})
		}
	}
}

func TestWriteErrorsLeaveNoFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	onlyFailed := episodes()[1:]
	if _, err := Write(path, onlyFailed, Options{Kind: KindPolicy, Format: FormatChatJSONL, SuccessOnly: true}); err == nil {
		t.Error("got no error for an export with no rows")
	}
	if _, err := Write(path, episodes(), Options{Kind: "dpo", Format: FormatChatJSONL}); err == nil {
		t.Error("got no error for an unknown kind")
	}
	if _, err := Write(path, episodes(), Options{Kind: KindSim, Format: "csv"}); err == nil {
		t.Error("got no error for an unknown format")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("got %d files left behind, want none", len(entries))
	}
}

func TestPromptRowsOpenTheLoggedEpisode(t *testing.T) {
	eps := episodes()
	// A seed above 2^53: it must reach the row exactly, as a string.
	eps[1].Seed, eps[1].Sample, eps[1].Task, eps[1].MaxTurns = 18446744073709551557, 2, "guess:small", 6
	rows := PromptRows(eps)
	r := rows[1]
	if len(r.Prompt) != 2 || r.Prompt[0].Role != "system" || r.Prompt[1].Content != "guess my number" {
		t.Errorf("got prompt %+v, want instructions and the opening", r.Prompt)
	}
	// The row names who opened it and how: a server trains another user
	// from the same opening, or names the cause when the same user opens
	// otherwise.
	want := InteractionKwargs{Name: "calibrl", Task: "guess:small", Split: "train", Index: 1, Sample: 2, EpisodeSeed: "18446744073709551557", MaxTurns: 6,
		LoggedUser: "human", Opening: "guess my number"}
	if r.ExtraInfo.InteractionKwargs != want {
		t.Errorf("got %+v, want %+v", r.ExtraInfo.InteractionKwargs, want)
	}
	// Read back as a JavaScript client would (numbers as doubles), the
	// seed is still exact.
	data, _ := json.Marshal(r.ExtraInfo.InteractionKwargs)
	var generic map[string]any
	json.Unmarshal(data, &generic)
	if generic["episode_seed"] != "18446744073709551557" {
		t.Errorf("episode_seed reads back as %v (%T), want the exact decimal string", generic["episode_seed"], generic["episode_seed"])
	}
}

// The label column is what OpenRLHF's PromptDataset hands the agent's
// reset: the interaction kwargs, as a JSON string that reads back to the
// same kwargs, seed exact. data_source and datasource name the task under
// the prefix the shipped verl reward function claims.
func TestPromptRowsCarryTheColumnsTrainersRead(t *testing.T) {
	eps := episodes()
	eps[0].Seed, eps[0].Task = 18446744073709551557, "guess:small"
	for _, r := range PromptRows(eps) {
		var kw InteractionKwargs
		if err := json.Unmarshal([]byte(r.Label), &kw); err != nil {
			t.Fatalf("label %q: %v", r.Label, err)
		}
		if kw != r.ExtraInfo.InteractionKwargs {
			t.Errorf("label reads back as %+v, want %+v", kw, r.ExtraInfo.InteractionKwargs)
		}
		if want := "calibrl/" + kw.Task; r.DataSource != want || r.Datasource != want {
			t.Errorf("data_source %q, datasource %q, want %q", r.DataSource, r.Datasource, want)
		}
	}
	if kw := PromptRows(eps)[0].Label; !strings.Contains(kw, `"episode_seed":"18446744073709551557"`) {
		t.Errorf("label %s: want the seed as an exact string", kw)
	}
}
