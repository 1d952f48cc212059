package mathchat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/tasktest"
)

// sharedGSM8K is the shared data folder, relative to this package.
const sharedGSM8K = "../../../shared/data/gsm8k"

func TestReadGSM8K(t *testing.T) {
	good := `{"question": "Tom has 3 apples. He buys 4 more. How many does he have?", "answer": "3+4=<<3+4=7>>7\n#### 7"}` + "\n\n" +
		`{"question": "Q?", "answer": "#### 1,200"}`
	ps, err := ReadGSM8K(strings.NewReader(good), "good.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || FormatRat(ps[0].Answer) != "7" || FormatRat(ps[1].Answer) != "1200" || ps[0].Solution != "3+4=7" {
		t.Fatalf("got %+v", ps)
	}
	bad := []struct {
		name, text, want string
	}{
		{"malformed json", `{"question": "a", "answer": "#### 1"}` + "\n{oops\n", "bad.jsonl:2:"},
		{"no final line", `{"question": "a", "answer": "it is 1"}`, "bad.jsonl:1: answer has no"},
		{"not a number", `{"question": "a", "answer": "#### many"}`, "bad.jsonl:1: final answer"},
		{"missing field", "\n" + `{"question": "a"}`, "bad.jsonl:2: want fields"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadGSM8K(strings.NewReader(c.text), "bad.jsonl")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := LoadGSM8K(filepath.Join(t.TempDir(), "missing.jsonl")); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing file: got %v, want an error naming it", err)
	}
}

func TestGSM8KShared(t *testing.T) {
	if _, err := os.Stat(filepath.Join(sharedGSM8K, "test.jsonl")); err != nil {
		t.Skipf("GSM8K data not found at %s (%v); skipping", sharedGSM8K, err)
	}
	ps, err := LoadGSM8K(filepath.Join(sharedGSM8K, "test.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1319 || FormatRat(ps[0].Answer) != "18" {
		t.Fatalf("got %d problems, first answer %v; want 1319 and 18", len(ps), ps[0].Answer)
	}
	tk := newTask(t, func(c *Config) { c.GSM8K = sharedGSM8K })
	for i := 0; i < 200; i++ {
		o, _, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		if o.Family != "gsm8k" || o.Instruction != ps[i].Question || o.Truth != FormatRat(ps[i].Answer) {
			t.Fatalf("%s: family %s truth %s, want gsm8k and %v", o.ID, o.Family, o.Truth, ps[i].Answer)
		}
		for _, h := range o.HiddenFacts() {
			if strings.Contains(o.Opening, h.Text) || len(h.Cues) == 0 {
				t.Fatalf("%s: hidden %q still in opening or has no cues", o.ID, h.Text)
			}
		}
		if len(o.HiddenFacts()) > 1 {
			t.Fatalf("%s: %d hidden facts, want at most 1", o.ID, len(o.HiddenFacts()))
		}
		// The human proxy asked for the answer, or about the hidden
		// sentence in its own words, states nothing beyond the problem.
		given := map[string]bool{}
		for _, n := range Numbers(o.Instruction) {
			given[FormatRat(n.Value)] = true
		}
		var ask []string
		for _, h := range o.HiddenFacts() {
			ask = append(ask, "What about the "+strings.Join(h.Cues, " ")+"?")
		}
		ep := tasktest.MustPlay(t, tk, o, &dialog.View{}, Human{}, &scriptAgent{append(ask, "What is the answer?")}, uint64(i), 6)
		for _, m := range ep.Messages {
			for _, n := range Numbers(m.Content) {
				if m.Role == dialog.RoleUser && !given[FormatRat(n.Value)] {
					t.Fatalf("%s: user wrote %s, not in the problem: %q", o.ID, n.Text, m.Content)
				}
			}
		}
	}
	if _, _, err := tk.Instance("test", 5000); !errors.Is(err, ErrIndex) {
		t.Errorf("index past the end: got %v, want ErrIndex", err)
	}
}

func FuzzReadGSM8K(f *testing.F) {
	f.Add(`{"question": "a 1", "answer": "#### 1"}`)
	f.Add(`{"question": "", "answer": "####"}`)
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ReadGSM8K(strings.NewReader(s), "fuzz.jsonl")
		if err == nil {
			for _, p := range ps {
				if p.Answer == nil {
					t.Fatal("problem without an answer")
				}
			}
		}
	})
}
