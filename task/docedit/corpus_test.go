package docedit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/task/hashsplit"
)

const corpusPara1 = "The river rose after three days of rain. Farmers moved their animals to the hills. Nobody was hurt."
const corpusPara2 = "A new bridge opened in May. It carries two lanes and a path for bikes."

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPassages(t *testing.T) {
	text := corpusPara1 + "\n\n" + "Too short.\n \n" + strings.ReplaceAll(corpusPara2, ". ", ".\n") + "\r\n"
	ps := Passages("doc", "T", text)
	if len(ps) != 2 {
		t.Fatalf("got %d passages %+v, want 2", len(ps), ps)
	}
	if ps[0].Text != corpusPara1 || ps[1].Text != corpusPara2 {
		t.Errorf("got %q and %q, want the two paragraphs, one line each", ps[0].Text, ps[1].Text)
	}
	if ps[0].ID != "doc#1" || ps[1].ID != "doc#2" || ps[1].Title != "T" {
		t.Errorf("got ids %q %q title %q", ps[0].ID, ps[1].ID, ps[1].Title)
	}
	// A paragraph longer than maxPassageWords is cut at sentence boundaries.
	long := strings.Repeat("This sentence has exactly seven words here. ", 40)
	for _, p := range Passages("long", "", long) {
		if n := wordCount(p.Text); n > maxPassageWords {
			t.Errorf("passage of %d words, want ≤ %d", n, maxPassageWords)
		}
		if !strings.HasSuffix(p.Text, "here.") {
			t.Errorf("passage %q not cut at a sentence end", p.Text)
		}
	}
}

func TestLoadCorpus(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", corpusPara1+"\n\n"+corpusPara2+"\n")
	writeFile(t, dir, "notes.md", "ignored")
	c, err := LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Train) + len(c.Test); n != 2 {
		t.Fatalf("got %d passages, want 2", n)
	}
	jl := writeFile(t, t.TempDir(), "c.jsonl",
		`{"id":"x1","title":"Flood","text":"`+corpusPara1+`\n\n`+corpusPara2+`","extra":1}`+"\n\n"+
			`{"id":7,"text":"`+corpusPara2+` More words follow here."}`+"\n")
	c, err = LoadCorpus(jl)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range append(c.Train, c.Test...) {
		ids = append(ids, p.ID)
	}
	if len(ids) != 3 {
		t.Fatalf("got passages %v, want 3", ids)
	}
	for _, p := range c.Train {
		if hashsplit.Of(p.Text) != "train" {
			t.Errorf("train passage %q hashes to test", p.ID)
		}
	}
}

func TestLoadCorpusErrors(t *testing.T) {
	dir := t.TempDir()
	empty := writeFile(t, dir, "empty.txt", " \n\n ")
	binary := writeFile(t, dir, "bin.txt", "Some text.\x00\x01 More.")
	latin1 := writeFile(t, dir, "latin1.txt", "Caf\xe9 au lait. It is good.")
	broken := writeFile(t, dir, "broken.jsonl", `{"id":"a","text":"`+corpusPara1+`"}`+"\n"+`{"id":"b","text": oops}`+"\n")
	notext := writeFile(t, dir, "notext.jsonl", `{"id":"a","title":"no text"}`+"\n")
	emptyJSONL := writeFile(t, dir, "empty.jsonl", "\n\n")
	short := writeFile(t, dir, "short.txt", "One line only.\n")
	noTxt := t.TempDir()
	writeFile(t, noTxt, "readme.md", "hello")
	badFolder := t.TempDir()
	writeFile(t, badFolder, "good.txt", corpusPara1)
	writeFile(t, badFolder, "zbad.txt", "\x00\x00")
	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"empty file", empty, []string{"empty.txt", "empty file"}},
		{"binary file", binary, []string{"bin.txt", "binary"}},
		{"not utf-8", latin1, []string{"latin1.txt", "binary"}},
		{"broken jsonl", broken, []string{"broken.jsonl:2"}},
		{"record without text", notext, []string{"notext.jsonl:1", "text"}},
		{"empty jsonl", emptyJSONL, []string{"empty.jsonl", "empty"}},
		{"no usable passage", short, []string{"short.txt", "no passage"}},
		{"folder without txt", noTxt, []string{"no .txt files"}},
		{"binary file in folder", badFolder, []string{"zbad.txt", "binary"}},
		{"missing path", filepath.Join(dir, "nope"), []string{"nope"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadCorpus(tc.path)
			if err == nil {
				t.Fatal("got no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// A task on a corpus draws its targets from the passages of the split.
func TestCorpusTask(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < 12; i++ {
		b.WriteString(strings.ReplaceAll(corpusPara1, "three", []string{"two", "four", "five", "six"}[i%4]))
		b.WriteString(" Day " + string(rune('A'+i)) + " was calm and the sky was clear.\n\n")
	}
	writeFile(t, dir, "news.txt", b.String())
	cfg := DefaultConfig()
	cfg.Corpus = dir
	tk, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, split := range []string{"train", "test"} {
		for i := 0; i < 5; i++ {
			o, _, err := tk.Instance(split, i)
			if err != nil {
				t.Fatal(err)
			}
			if o.Family != "corpus" || hashsplit.Of(o.Truth) != split {
				t.Errorf("%s: family %q, target in split %q", o.ID, o.Family, hashsplit.Of(o.Truth))
			}
			if err := ValidatePlan(o.Draft, o.Truth, o.Edits); err != nil {
				t.Errorf("%s: %v", o.ID, err)
			}
		}
	}
}

func FuzzReadCorpusJSONL(f *testing.F) {
	f.Add(`{"id":"a","text":"One two three. Four five six seven eight nine ten."}`)
	f.Add(`{"id":1,"title":"t","text":"x"}` + "\n" + `{"text":""}`)
	f.Add("{\"text\":\"A b.\\n\\nC d.\"}\n\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		ps, err := ReadCorpusJSONL(strings.NewReader(in), "f.jsonl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.jsonl") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, p := range ps {
			if p.Text != Normalize(p.Text) || len(SplitSentences(p.Text)) < minPassageSentences {
				t.Fatalf("passage %q not normalised or too short", p.Text)
			}
		}
	})
}
