package mathchat

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/infile"
	"github.com/calibrl/calibrl/task/hashsplit"
	"github.com/calibrl/calibrl/task/persona"
)

// GSMProblem is one record of a GSM8K-format file.
type GSMProblem struct {
	Question string
	// Solution is the worked answer without its "#### N" line and
	// calculator annotations ("<<2*3=6>>").
	Solution string
	// Worked is the same answer with its calculator annotations, which
	// the scripted agents' book is made from (tutor.go).
	Worked string
	Answer *big.Rat
}

var calcAnnotRe = regexp.MustCompile(`<<[^>]*>>`)

// ReadGSM8K reads GSM8K-format JSON Lines: one {"question", "answer"}
// object a line, the answer ending in a "#### N" line. Blank lines are
// skipped. Errors name the source and line ("test.jsonl:12: ...").
func ReadGSM8K(r io.Reader, name string) ([]GSMProblem, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var out []GSMProblem
	for line := 1; sc.Scan(); line++ {
		raw := strings.TrimSpace(sc.Text())
		if raw == "" {
			continue
		}
		var rec struct {
			Question *string `json:"question"`
			Answer   *string `json:"answer"`
		}
		if err := json.Unmarshal([]byte(raw), &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if rec.Question == nil || rec.Answer == nil {
			return nil, fmt.Errorf("%s:%d: want fields \"question\" and \"answer\"", name, line)
		}
		sol, final, ok := strings.Cut(*rec.Answer, "####")
		if !ok {
			return nil, fmt.Errorf("%s:%d: answer has no \"#### N\" line", name, line)
		}
		n, ok := ParseNumber(strings.TrimSpace(final))
		if !ok {
			return nil, fmt.Errorf("%s:%d: final answer %q is not a number", name, line, strings.TrimSpace(final))
		}
		out = append(out, GSMProblem{Question: strings.TrimSpace(*rec.Question),
			Solution: strings.TrimSpace(calcAnnotRe.ReplaceAllString(sol, "")), Worked: strings.TrimSpace(sol), Answer: n.Value})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// LoadGSM8K reads a GSM8K-format file.
func LoadGSM8K(path string) ([]GSMProblem, error) {
	f, err := infile.Open(nil, path)
	if err != nil {
		return nil, fmt.Errorf("load gsm8k: %w", err)
	}
	defer f.Close()
	return ReadGSM8K(f, path)
}

// gsm8kSet holds the two splits of a GSM8K folder.
type gsm8kSet struct {
	splits map[string][]GSMProblem
}

// loadGSM8KDir reads a GSM8K folder (train.jsonl and test.jsonl), or one
// GSM8K-format file whose problems are split into train and test by a
// hash of each question, as generated problems are.
func loadGSM8KDir(dir string) (*gsm8kSet, error) {
	set := &gsm8kSet{splits: map[string][]GSMProblem{}}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		ps, err := LoadGSM8K(dir)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			s := hashsplit.Of(p.Question)
			set.splits[s] = append(set.splits[s], p)
		}
		for _, split := range []string{"train", "test"} {
			if len(set.splits[split]) == 0 {
				return nil, fmt.Errorf("load gsm8k: %s has no problem in the %s split (%d problems in all)", dir, split, len(ps))
			}
		}
		return set, nil
	}
	for _, split := range []string{"train", "test"} {
		ps, err := LoadGSM8K(filepath.Join(dir, split+".jsonl"))
		if err != nil {
			return nil, err
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("load gsm8k: %s has no problems", filepath.Join(dir, split+".jsonl"))
		}
		set.splits[split] = ps
	}
	return set, nil
}

// Problems reports how many problems split holds when the task plays a
// data file (GSM8K), so that a caller can refuse a run that asks for more
// before it plays any; ok is false for generated problems, which have no
// end.
func (t *Task) Problems(split string) (n int, ok bool) {
	if t.gsm == nil {
		return 0, false
	}
	return len(t.gsm.splits[split]), true
}

// ErrIndex reports an instance index past the end of a data file.
var ErrIndex = errors.New("mathchat: instance index out of range")

// instance turns record index of split into an oracle. Each sentence
// with a number (other than the question) is a fact; one of them, drawn
// from the index, is hidden: withheld from the opening, its content words
// its cues.
func (s *gsm8kSet) instance(split string, index int, id string) (*dialog.Oracle, error) {
	ps := s.splits[split]
	if index >= len(ps) {
		return nil, fmt.Errorf("%w: %s has %d problems, asked for %d", ErrIndex, split, len(ps), index)
	}
	p := ps[index]
	stream, _ := dialog.SplitStream(split) // Instance checked the split
	rng := rand.New(rand.NewPCG(uint64(index), stream))
	o := &dialog.Oracle{Task: Name, ID: id, Split: split, Family: "gsm8k", Instruction: p.Question,
		Truth: FormatRat(p.Answer), Solution: p.Solution}
	sents := splitSentences(p.Question)
	var factAt []int
	for i, sent := range sents[:max(0, len(sents)-1)] { // the last sentence asks the question
		if ns := Numbers(sent); len(ns) > 0 {
			o.Facts = append(o.Facts, dialog.Fact{Key: fmt.Sprintf("sentence%d", i), Text: sent,
				Value: FormatRat(ns[0].Value), Cues: contentStems(sent)})
			factAt = append(factAt, i)
		}
	}
	hidden := -1
	if len(o.Facts) > 1 { // keep at least one number in the opening
		k := rng.IntN(len(o.Facts))
		o.Facts[k].Hidden = true
		hidden = factAt[k]
	}
	var open []string
	for i, sent := range sents {
		if i != hidden {
			open = append(open, sent)
		}
	}
	o.Opening = strings.Join(open, " ")
	o.Persona = persona.Draw(rng, persona.Human)
	return o, nil
}

// stopStems are the function words left out of a sentence's cues.
var stopStems = map[string]bool{}

func init() {
	for _, w := range strings.Fields("the a an and or of to in on at for with by from is are was were be been has have had he she it its they them their his her him this that these those each every per as than then there what how many much does did do if so but not all also some more one two three four five six seven eight nine ten") {
		stopStems[stem(w)] = true
	}
}

// contentStems returns the distinct content-word stems of a sentence.
func contentStems(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range wordStems(s) {
		if !stopStems[w] && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
