package docedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/infile"
	"github.com/calibrl/calibrl/task/hashsplit"
)

// Passage is one target document from a corpus.
type Passage struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	Text  string `json:"text"`
}

// Corpus is a set of passages, split into train and test by a hash of
// each passage's text (so no passage is in both).
type Corpus struct {
	Source      string
	Train, Test []Passage
}

// Passage limits: a passage needs two sentences for sentence edits, and
// a paragraph longer than maxPassageWords is cut at sentence boundaries.
const (
	minPassageSentences = 2
	minPassageWords     = 10
	maxPassageWords     = 120
)

// LoadCorpus reads path: a folder of .txt files (each split into
// passages at blank lines), one .txt file, or a .jsonl file of
// {"id","title","text"} records (each text split the same way). Errors
// name the file (and line, for JSONL): an empty file, a binary file, a
// broken record, a folder without .txt files, no usable passage.
func LoadCorpus(path string) (*Corpus, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load corpus: %w", err)
	}
	c := &Corpus{Source: path}
	var all []Passage
	switch {
	case st.IsDir():
		files, err := filepath.Glob(filepath.Join(path, "*.txt"))
		if err != nil {
			return nil, fmt.Errorf("load corpus %s: %w", path, err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("load corpus %s: no .txt files in the folder", path)
		}
		sort.Strings(files)
		for _, f := range files {
			ps, err := loadTextFile(f)
			if err != nil {
				return nil, err
			}
			all = append(all, ps...)
		}
	case strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, ".json"):
		data, err := readText(path)
		if err != nil {
			return nil, err
		}
		if all, err = ReadCorpusJSONL(bytes.NewReader(data), path); err != nil {
			return nil, err
		}
	default:
		if all, err = loadTextFile(path); err != nil {
			return nil, err
		}
	}
	for _, p := range all {
		if hashsplit.Of(p.Text) == "train" {
			c.Train = append(c.Train, p)
		} else {
			c.Test = append(c.Test, p)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("load corpus %s: no passage of at least %d sentences and %d words", path, minPassageSentences, minPassageWords)
	}
	return c, nil
}

// readText reads a file and rejects empty and binary (NUL bytes or not
// UTF-8) content, naming the file.
func readText(path string) ([]byte, error) {
	data, err := infile.ReadFile(nil, path)
	if err != nil {
		return nil, fmt.Errorf("load corpus: %w", err)
	}
	if err := checkText(data); err != nil {
		return nil, fmt.Errorf("load corpus %s: %w", path, err)
	}
	return data, nil
}

func checkText(data []byte) error {
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return errors.New("empty file")
	case bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data):
		return errors.New("binary file (want UTF-8 text)")
	}
	return nil
}

func loadTextFile(path string) ([]Passage, error) {
	data, err := readText(path)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return Passages(base, "", string(data)), nil
}

// ReadCorpusJSONL parses JSONL records {"id","title","text"}; name is used
// in errors ("corpus.jsonl:3: ..."). Other fields are ignored. A record
// without text is an error; one whose text has no usable passage is not.
func ReadCorpusJSONL(r io.Reader, name string) ([]Passage, error) {
	var out []Passage
	n := 0
	err := dialog.ScanJSONL(r, name, func(line []byte) error {
		n++
		var rec struct {
			ID    json.RawMessage `json:"id"`
			Title string          `json:"title"`
			Text  *string         `json:"text"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		if rec.Text == nil || strings.TrimSpace(*rec.Text) == "" {
			return errors.New(`record has no "text"`)
		}
		id := strings.Trim(string(rec.ID), `"`)
		if id == "" {
			id = fmt.Sprint(n)
		}
		out = append(out, Passages(id, rec.Title, *rec.Text)...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no records", name)
	}
	return out, nil
}

var paragraphRe = regexp.MustCompile(`\n[ \t\r\f\v]*\n`)

// Passages splits text into passages at blank lines. Each paragraph is
// normalised to one line; one of more than maxPassageWords words is cut
// into runs of whole sentences; a passage of fewer than two sentences or
// ten words is dropped. IDs are id#1, id#2, ... in order.
func Passages(id, title, text string) []Passage {
	var out []Passage
	for _, para := range paragraphRe.Split(strings.ReplaceAll(text, "\r\n", "\n"), -1) {
		sents := SplitSentences(para)
		var cur []string
		flush := func() {
			doc := JoinSentences(cur)
			if len(cur) >= minPassageSentences && wordCount(doc) >= minPassageWords {
				out = append(out, Passage{ID: fmt.Sprintf("%s#%d", id, len(out)+1), Title: title, Text: doc})
			}
			cur = nil
		}
		words := 0
		for _, s := range sents {
			if words+wordCount(s) > maxPassageWords && len(cur) > 0 {
				flush()
				words = 0
			}
			cur = append(cur, s)
			words += wordCount(s)
		}
		flush()
	}
	return out
}

// passage returns the split's passage for an instance index; indices past
// the end wrap around (the draft still differs, being drawn per index).
func (c *Corpus) passage(split string, index int) (Passage, error) {
	ps := c.Train
	if split == "test" {
		ps = c.Test
	}
	if len(ps) == 0 {
		return Passage{}, fmt.Errorf("corpus %s has no %s passages", c.Source, split)
	}
	return ps[index%len(ps)], nil
}
