package humanlog

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

var mapping = Mapping{Task: "mathchat", ID: "conv_id", Instruction: "question", GroundTruth: "answer",
	HiddenFacts: "hidden", Split: "", TestPercent: 0, EndValue: "solved"}

func TestConvertRoundTrip(t *testing.T) {
	in, _ := os.Open("testdata/chat.jsonl")
	defer in.Close()
	var out bytes.Buffer
	n, err := Convert(in, "chat.jsonl", &out, mapping)
	if err != nil || n != 2 {
		t.Fatalf("Convert: %d, %v", n, err)
	}
	recs, err := Read(&out, "out.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	if r.ID != "a1" || r.GroundTruth != "7" || r.Split != "train" || len(r.HiddenFacts) != 1 || r.HiddenFacts[0].Value != "4" ||
		len(r.Messages) != 5 || r.End != "solved" || r.Persona != nil {
		t.Fatalf("record 1: %+v", r)
	}
	if recs[1].Messages[1].Role != "assistant" || recs[1].Messages[0].Content == "" {
		t.Fatalf("ShareGPT roles: %+v", recs[1].Messages)
	}
	ep := r.Episode(0)
	if ep.Oracle.Truth != "7" || len(ep.Oracle.HiddenFacts()) != 1 || ep.Turns != 2 || ep.End != dialog.Solved ||
		ep.Agent != DefaultAgent || ep.Oracle.Instruction != mapping0Question {
		t.Fatalf("episode: %+v", ep)
	}
	// A split field is read, dotted.
	m := mapping
	m.Split = "meta.split"
	in.Seek(0, 0)
	out.Reset()
	if _, err := Convert(in, "chat.jsonl", &out, m); err == nil || !strings.Contains(err.Error(), `chat.jsonl:1: field "meta.split": missing`) {
		t.Fatalf("missing split: %v", err)
	}
}

const mapping0Question = "Tom has 3 apples and buys 4 more. How many apples does he have?"

func TestConvertRefusesIncompleteRecords(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"conv_id":"x","answer":1,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`, `in.jsonl:1: field "question": missing`},
		{`{"conv_id":"x","question":"q","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`, `in.jsonl:1: field "answer": missing`},
		{`{"conv_id":"x","question":"q","answer":"","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`, `field "answer": empty`},
		{`{"conv_id":"x","question":"q","answer":1}`, `field "messages": missing`},
		{`{"conv_id":"x","question":"q","answer":1,"messages":[{"role":"robot","content":"q"}]}`, `field "messages[0]": role "robot"`},
		{`{"conv_id":"x","question":"q","answer":1,"messages":[{"role":"user","content":"q"}]}`, `field "messages": no assistant turn`},
		{`{"conv_id":"x","question":"q","answer":1,"messages":[{"role":"assistant","content":"a"},{"role":"user","content":"q"}]}`, `field "messages[0].role"`},
		{`{"conv_id":"x","question":"q","answer":1,"messages":[{"role":"user","content":" "},{"role":"assistant","content":"a"}]}`, `field "messages[0].content": empty`},
		{`{"conv_id":"x","question":"q","answer":1,"hidden":[3],"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`, `field "hidden[0]"`},
		{`{"conv_id":"x","question":"q","answer":{"n":1},"messages":[]}`, `field "answer": want a string or a number`},
		{`{oops`, `in.jsonl:1: not a JSON object`},
	} {
		var out bytes.Buffer
		_, err := Convert(strings.NewReader(c.line), "in.jsonl", &out, mapping)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n  got %v\n  want %q", c.line, err, c.want)
		}
	}
	two := `{"conv_id":"x","question":"q","answer":1,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`
	if _, err := Convert(strings.NewReader(two+"\n"+two), "in.jsonl", &bytes.Buffer{}, mapping); err == nil || !strings.Contains(err.Error(), `in.jsonl:2: field "conv_id": "x" appears twice`) {
		t.Errorf("duplicate id: %v", err)
	}
	m := mapping
	m.EndValue = ""
	if _, err := Convert(strings.NewReader(two), "in.jsonl", &bytes.Buffer{}, m); err == nil || !strings.Contains(err.Error(), "how conversations ended") {
		t.Errorf("no end: %v", err)
	}
}

func TestReadRefusesWithFileLineField(t *testing.T) {
	good := `{"schema":"calibrl.humanlog/v1","id":"a","task":"mathchat","split":"train","instruction":"q","ground_truth":"1","end":"solved","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`
	if _, err := Read(strings.NewReader(good), "logs.jsonl"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ edit, want string }{
		{`"ground_truth":"1",`, `logs.jsonl:2: field "ground_truth": missing`},
		{`"schema":"calibrl.humanlog/v1",`, `field "schema": missing`},
		{`"split":"train",`, `field "split": missing`},
		{`"end":"solved",`, `field "end": missing`},
	} {
		bad := strings.Replace(good, c.edit, "", 1)
		_, err := Read(strings.NewReader(good+"\n"+bad), "logs.jsonl")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("without %s: %v, want %q", c.edit, err, c.want)
		}
	}
	for _, c := range []struct{ old, new, want string }{
		{`"split":"train"`, `"split":"dev"`, `field "split": "dev"`},
		{`"end":"solved"`, `"end":"happy"`, `field "end": "happy"`},
		{`"task":"mathchat"`, `"task":"docedit"`, `field "draft": missing`},
		{`"task":"mathchat"`, `"task":"docedit:easy:data=sha256:` + strings.Repeat("0", 64) + `"`, `field "draft": missing`},
		{`"task":"mathchat"`, `"task":"mathchat:hard"`, `field "task": task "mathchat:hard": unknown level "hard"`},
		{`"id":"a"`, `"id":"a","goal":"x"`, `field "goal": unknown field`},
		{`"id":"a"`, `"id":"a","persona":{"patience":2,"verbosity":0.5,"typo_rate":0}`, `field "persona.clarity": missing`},
		{`"id":"a"`, `"id":"a","persona":{"patience":2,"verbosity":1.5,"typo_rate":0,"clarity":1}`, `field "persona.verbosity": 1.5 not in [0,1]`},
		{`"id":"a"`, `"id":7`, `field "id": want string`},
		{`"schema":"calibrl.humanlog/v1"`, `"schema":"calibrl.humanlog/v9"`, `field "schema"`},
	} {
		bad := strings.Replace(good, c.old, c.new, 1)
		_, err := Read(strings.NewReader(bad), "logs.jsonl")
		var fe *FieldError
		if err == nil || !strings.Contains(err.Error(), "logs.jsonl:1: "+c.want) || !errors.As(err, &fe) {
			t.Errorf("%s: %v, want %q", c.new, err, c.want)
		}
	}
	long := strings.Replace(good, `"content":"a"`, `"content":"`+strings.Repeat("a", 1<<20+1)+`"`, 1)
	if _, err := Read(strings.NewReader(good+"\n"+long), "logs.jsonl"); err == nil ||
		!strings.Contains(err.Error(), `logs.jsonl:2: field "messages[1].content": 1048577 bytes, the limit is 1048576`) {
		t.Errorf("a message over the limit: %v", err)
	}
	if _, err := Read(strings.NewReader(good+"\n"+good), "logs.jsonl"); err == nil || !strings.Contains(err.Error(), `logs.jsonl:2: field "id"`) {
		t.Errorf("duplicate id: %v", err)
	}
}

func TestSniff(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/x.jsonl"
	os.WriteFile(p, []byte("\n{\"schema\":\"calibrl.humanlog/v1\"}\n"), 0o644)
	if ok, err := Sniff(p); !ok || err != nil {
		t.Fatalf("Sniff(humanlog) = %v, %v", ok, err)
	}
	os.WriteFile(p, []byte("{\"id\":\"e\",\"messages\":[]}\n"), 0o644)
	if ok, err := Sniff(p); ok || err != nil {
		t.Fatalf("Sniff(episodes) = %v, %v", ok, err)
	}
}

// FuzzParse: any line either parses into a record that passes Check and
// survives a JSON round trip, or is refused; Parse never panics.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"schema":"calibrl.humanlog/v1","id":"a","task":"mathchat","split":"train","instruction":"q","ground_truth":"1","end":"solved","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`))
	f.Add([]byte(`{"schema":"calibrl.humanlog/v1","id":"a","task":"docedit","split":"test","instruction":"q","ground_truth":"1","draft":"d","end":"max_turns","persona":{"patience":1,"verbosity":0,"typo_rate":0,"clarity":1},"hidden_facts":[{"text":"t"}],"messages":[{"role":"user","content":"q"},{"role":"system","content":"s"},{"role":"assistant","content":"a"}]}`))
	f.Add([]byte(`{"id":null}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := Parse(line)
		if err != nil {
			return
		}
		if err := r.Check(); err != nil {
			t.Fatalf("Parse accepted a record Check refuses: %v", err)
		}
		ep := r.Episode(0)
		if len(ep.Messages) == 0 || ep.Oracle.Truth == "" || ep.Messages[0].Role != dialog.RoleUser {
			t.Fatalf("episode of an accepted record: %+v", ep)
		}
		var buf bytes.Buffer
		if err := jsonEncode(&buf, r); err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(buf.Bytes()); err != nil {
			t.Fatalf("re-encoded record refused: %v\n%s", err, buf.Bytes())
		}
	})
}
