package runreport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/fidelity"
)

// Problems is how many held-out problems the report shows side by side.
const Problems = 6

// TranscriptSet is one evaluation folder's transcripts: the same held-out
// problems under every arm (seed index 0 for RL arms).
type TranscriptSet struct {
	// Dir is the folder they come from ("eval", "eval-greedy",
	// "fidelity"); Title says who the users were and how the policies
	// decoded.
	Dir, Title string
	Arms       []string
	Problems   []Problem
}

// Problem is one held-out problem and each arm's conversation on it.
type Problem struct {
	Index       int
	Instruction string
	Truth       string
	Hidden      []string
	Cells       []Transcript
}

// Transcript is one arm's conversation on a problem; Missing when the
// arm's file lacks it.
type Transcript struct {
	Arm      string
	Missing  bool
	Success  bool
	End      string
	Outcome  string
	Reward   float64
	Turns    int
	Metrics  string
	Messages []Msg
	// LeftAct is the act of a user who left after the agent's last turn
	// without writing (fidelity.EpisodeActs's trailing End), or "".
	LeftAct string
}

// Msg is one message with, for a user's, its dialogue act.
type Msg struct {
	Role    string
	Content string
	Act     string
}

// episodeFile is where dir keeps arm's transcripts: eval/base.episodes.jsonl
// for an arm without RL seeds, eval/ARM/seed-0.episodes.jsonl otherwise.
func episodeFile(dir, arm string) string {
	flat := filepath.Join(dir, arm+".episodes.jsonl")
	if _, err := os.Stat(flat); err == nil {
		return flat
	}
	return filepath.Join(dir, arm, "seed-0.episodes.jsonl")
}

// headEpisodes reads the first n episodes of a JSONL file (the whole file
// of a 500-problem evaluation is not needed), checked as every reader of
// episode logs checks them (dialog.EpisodeReader).
func headEpisodes(path string, n int) ([]dialog.Episode, error) {
	r, err := dialog.OpenEpisodes(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []dialog.Episode
	for len(out) < n {
		ep, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ep)
	}
	return out, nil
}

// transcriptSets reads the transcripts of every evaluation folder of the
// run: eval/ first, then eval-* folders by name, then fidelity/ (the same
// policies against the calibrated simulator). A folder without any arm's
// episodes is skipped.
func transcriptSets(dir string, arms []string) ([]TranscriptSet, error) {
	dirs := []string{"eval"}
	more, _ := filepath.Glob(filepath.Join(dir, "eval-*"))
	sort.Strings(more)
	for _, m := range more {
		if fi, err := os.Stat(m); err == nil && fi.IsDir() {
			dirs = append(dirs, filepath.Base(m))
		}
	}
	dirs = append(dirs, "fidelity")
	var out []TranscriptSet
	for _, d := range dirs {
		ts, err := transcripts(filepath.Join(dir, d), arms, Problems)
		if err != nil {
			return nil, err
		}
		if len(ts.Problems) > 0 {
			ts.Dir = d
			out = append(out, ts)
		}
	}
	return out, nil
}

// transcripts pairs the first n problems of the first arm that has
// episodes with every arm's conversation on the same problem and user
// seed.
func transcripts(dir string, arms []string, n int) (TranscriptSet, error) {
	type key struct {
		index int
		seed  uint64
	}
	var ts TranscriptSet
	byArm := map[string]map[key]dialog.Episode{}
	var ref []dialog.Episode
	for _, arm := range arms {
		eps, err := headEpisodes(episodeFile(dir, arm), n)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return ts, fmt.Errorf("runreport: %w", err)
		}
		ts.Arms = append(ts.Arms, arm)
		byArm[arm] = map[key]dialog.Episode{}
		for _, ep := range eps {
			byArm[arm][key{ep.Index, ep.Seed}] = ep
		}
		if ref == nil {
			ref = eps
		}
	}
	for _, r := range ref {
		p := Problem{Index: r.Index, Instruction: r.Oracle.Instruction, Truth: r.Oracle.Truth}
		if p.Instruction == "" {
			p.Instruction = r.Oracle.Opening
		}
		for _, f := range r.Oracle.Facts {
			if f.Hidden {
				p.Hidden = append(p.Hidden, f.Text)
			}
		}
		for _, arm := range ts.Arms {
			ep, ok := byArm[arm][key{r.Index, r.Seed}]
			if !ok {
				p.Cells = append(p.Cells, Transcript{Arm: arm, Missing: true})
				continue
			}
			p.Cells = append(p.Cells, transcript(arm, &ep))
		}
		ts.Problems = append(ts.Problems, p)
	}
	return ts, nil
}

// transcript marks each user message of ep with its dialogue act
// (fidelity.EpisodeActs, the classifier every simulator is judged by).
func transcript(arm string, ep *dialog.Episode) Transcript {
	t := Transcript{Arm: arm, Success: ep.Success, End: string(ep.End), Outcome: ep.Outcome, Reward: ep.Reward, Turns: ep.Turns}
	var ms []string
	for _, k := range sortedKeys(ep.Metrics) {
		ms = append(ms, fmt.Sprintf("%s %.3g", k, ep.Metrics[k]))
	}
	t.Metrics = strings.Join(ms, ", ")
	var acts []fidelity.Act
	if len(ep.Messages) > 0 {
		acts = fidelity.EpisodeActs(ep)
	}
	u := 0
	for _, m := range ep.Messages {
		msg := Msg{Role: string(m.Role), Content: m.Content}
		if m.Role == dialog.RoleUser {
			if u < len(acts) {
				msg.Act = string(acts[u])
			}
			u++
		}
		t.Messages = append(t.Messages, msg)
	}
	if u < len(acts) {
		t.LeftAct = string(acts[u])
	}
	return t
}
