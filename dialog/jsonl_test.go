package dialog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sampleEpisode() Episode {
	return Episode{
		ID: "mathchat/test/3/0", Task: "mathchat", Split: "test", Agent: "scripted:careful", User: "human",
		Seed: 1<<63 + 5, Index: 3,
		Oracle: Oracle{Task: "mathchat", ID: "mathchat/test/3", Split: "test", Instruction: "Tom buys 4 apples at $3 each. How much?",
			Opening: "Tom buys some apples at $3 each. How much?", Truth: "12",
			Facts:   []Fact{{Key: "n", Text: "Tom buys 4 apples", Value: "4", Cues: []string{"apples", "how many"}, Hidden: true}},
			Persona: Persona{Patience: 5, Verbosity: 0.25, TypoRate: 0.1, Clarity: 0.9},
			Extra:   json.RawMessage(`{"family":"shopping"}`)},
		View: View{Task: "mathchat", Instructions: "Help the user."},
		Messages: []Message{
			{Role: RoleUser, Content: "Tom buys some apples…\n\"quoted\" <b>", Tokens: 9},
			{Role: RoleAssistant, Content: "How many apples?", Tokens: 4},
		},
		Outcome: "12", Reward: 1, Success: true, End: Solved, Turns: 1, Tokens: 13,
		Metrics: map[string]float64{"bleu": 41.5},
	}
}

func TestEpisodeJSONLRoundTrip(t *testing.T) {
	eps := []Episode{sampleEpisode(), sampleEpisode()}
	eps[1].ID, eps[1].Metrics, eps[1].Oracle.Extra = "other", nil, nil
	var buf bytes.Buffer
	if err := WriteEpisodes(&buf, eps); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 2 {
		t.Fatalf("got %d lines, want 2", n)
	}
	got, err := ReadEpisodes(&buf, "mem")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, eps) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, eps)
	}
}

func TestReadEpisodesNamesFileAndLine(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteEpisodes(&buf, []Episode{sampleEpisode()}); err != nil {
		t.Fatal(err)
	}
	good := strings.TrimSpace(buf.String())
	cases := []struct{ name, text, want string }{
		{"broken json", good + "\n\n{\"id\": 3\n", "logs.jsonl:3:"},
		{"unknown field", good + "\n{\"bogus\":1}\n", "logs.jsonl:2:"},
		{"no task", "{\"id\":\"x\"}\n", `logs.jsonl:1: field "task": missing`},
		{"two values", good + " {}\n", "logs.jsonl:1:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadEpisodes(strings.NewReader(c.text), "logs.jsonl")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestSaveAndLoadEpisodes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "eps.jsonl")
	if err := SaveEpisodes(path, []Episode{sampleEpisode()}); err != nil {
		t.Fatal(err)
	}
	got, err := LoadEpisodes(path)
	if err != nil || len(got) != 1 {
		t.Fatalf("load: %v, %d episodes", err, len(got))
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadEpisodes(path); err == nil || !strings.Contains(err.Error(), "no episodes") {
		t.Fatalf("empty file: got %v", err)
	}
	if err := SaveEpisodes(filepath.Join(dir, "missing", "x.jsonl"), nil); err == nil {
		t.Fatal("unwritable path: want an error")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}

func TestApproxTokens(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"", 0}, {"hello", 1}, {"Tom buys 4 apples.", 5}, {"$1,200.50!", 7}, {"  a  b ", 2}} {
		if got := ApproxTokens(c.in); got != c.want {
			t.Errorf("ApproxTokens(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func FuzzReadEpisodes(f *testing.F) {
	var buf bytes.Buffer
	WriteEpisodes(&buf, []Episode{sampleEpisode()})
	f.Add(buf.Bytes())
	f.Add([]byte("{}\n{\"messages\":[]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		eps, err := ReadEpisodes(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteEpisodes(&out, eps); err != nil {
			t.Fatal(err)
		}
		again, err := ReadEpisodes(&out, "again")
		if err != nil || len(again) != len(eps) {
			t.Fatalf("re-read of written episodes: %v", err)
		}
	})
}

// A message longer than MaxMessageBytes is refused with file, line and
// message; one of exactly the limit is read.
func TestReadEpisodesBoundsMessages(t *testing.T) {
	write := func(size int) string {
		ep := sampleEpisode()
		ep.Messages[1].Content = strings.Repeat("x", size)
		var buf bytes.Buffer
		if err := WriteEpisodes(&buf, []Episode{sampleEpisode(), ep}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if _, err := ReadEpisodes(strings.NewReader(write(1<<20)), "logs.jsonl"); err != nil {
		t.Fatalf("a message of the limit: %v", err)
	}
	_, err := ReadEpisodes(strings.NewReader(write(1<<20+1)), "logs.jsonl")
	if want := "logs.jsonl:2: messages[1].content: 1048577 bytes, the limit is 1048576"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}
