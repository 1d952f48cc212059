package dialog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// sampleLine is sampleEpisode as a JSONL record, edited by edit (a map of
// the record's JSON object).
func sampleLine(t testing.TB, edit func(m map[string]any)) string {
	t.Helper()
	data, err := json.Marshal(sampleEpisode())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// Episode logs are checked as strictly as human logs: every reader gets
// an error naming file, line and field for a record no trainer or export
// may read: no oracle (an empty goal and ground truth), a role that is no
// role, counts that disagree with the messages.
func TestEpisodeLogsChecked(t *testing.T) {
	oracle := func(m map[string]any) map[string]any { return m["oracle"].(map[string]any) }
	msg := func(m map[string]any, i int) map[string]any { return m["messages"].([]any)[i].(map[string]any) }
	for _, c := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"no oracle", func(m map[string]any) { delete(m, "oracle") }, `field "oracle": missing`},
		{"empty oracle", func(m map[string]any) { m["oracle"] = map[string]any{} }, `field "oracle.task": missing`},
		{"no goal", func(m map[string]any) { oracle(m)["instruction"] = "" }, `field "oracle.instruction": empty`},
		{"no ground truth", func(m map[string]any) { oracle(m)["truth"] = " " }, `field "oracle.truth": empty`},
		{"robot", func(m map[string]any) { msg(m, 1)["role"] = "robot" }, `field "messages[1].role": "robot"`},
		{"root", func(m map[string]any) { msg(m, 0)["role"] = "root" }, `field "messages[0].role": "root"`},
		{"agent first", func(m map[string]any) { msg(m, 0)["role"] = "assistant"; m["turns"] = 2 }, `field "messages[0].role"`},
		{"no messages", func(m map[string]any) { m["messages"] = []any{} }, `field "messages": empty`},
		{"turns", func(m map[string]any) { m["turns"] = 3 }, `field "turns": 3, but the messages hold 1`},
		{"max_turns type", func(m map[string]any) { m["max_turns"] = 0.5 }, `field "max_turns": want int`},
		{"end", func(m map[string]any) { m["end"] = "done" }, `field "end": "done"`},
		{"no end", func(m map[string]any) { delete(m, "end") }, `field "end": missing`},
		{"split", func(m map[string]any) { m["split"] = "dev" }, `field "split": "dev"`},
		{"oracle split", func(m map[string]any) { oracle(m)["split"] = "train" }, `field "oracle.split"`},
		{"persona", func(m map[string]any) { oracle(m)["persona"].(map[string]any)["clarity"] = 2 }, `field "oracle.persona.clarity"`},
		{"no user", func(m map[string]any) { m["user"] = "" }, `field "user": empty`},
		{"seed type", func(m map[string]any) { m["seed"] = "1" }, `field "seed": want uint64`},
		{"index", func(m map[string]any) { m["index"] = -1 }, `field "index": -1 is negative`},
	} {
		text := sampleLine(t, func(map[string]any) {}) + "\n" + sampleLine(t, c.edit) + "\n"
		want := "logs.jsonl:2: " + c.want
		if _, err := ReadEpisodes(strings.NewReader(text), "logs.jsonl"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: ReadEpisodes: %v, want %q", c.name, err, want)
		}
		r := NewEpisodeReader(strings.NewReader(text), "logs.jsonl")
		if _, err := r.Next(); err != nil {
			t.Fatalf("%s: the good line: %v", c.name, err)
		}
		if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: EpisodeReader: %v, want %q", c.name, err, want)
		}
	}
	// What calibrl writes reads back.
	if _, err := ReadEpisodes(strings.NewReader(sampleLine(t, func(map[string]any) {})), "logs.jsonl"); err != nil {
		t.Errorf("a whole episode: %v", err)
	}
}

// FuzzParseEpisode: any line either parses into an episode that passes
// Check and writes back to a line that parses the same, or is an error;
// never a panic.
func FuzzParseEpisode(f *testing.F) {
	var buf bytes.Buffer
	WriteEpisodes(&buf, []Episode{sampleEpisode()})
	f.Add(bytes.TrimSpace(buf.Bytes()))
	f.Add([]byte(`{"id":"x"}`))
	f.Add([]byte(`{"oracle":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, line []byte) {
		ep, err := parseEpisode(line)
		if err != nil {
			return
		}
		if err := ep.Check(); err != nil {
			t.Fatalf("parsed an episode that fails Check: %v", err)
		}
		var out bytes.Buffer
		if err := WriteEpisodes(&out, []Episode{ep}); err != nil {
			t.Fatal(err)
		}
		if _, err := parseEpisode(bytes.TrimSpace(out.Bytes())); err != nil {
			t.Fatalf("an episode read back does not parse again: %v\n%s", err, out.Bytes())
		}
	})
}
