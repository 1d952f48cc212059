package task

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/calibrl/calibrl/task/docedit"
	"github.com/calibrl/calibrl/task/mathchat"
)

// registry maps task names to builders taking a level: "" for the task's
// defaults, "easy" for the size the embedded 1–10M-parameter models can
// learn on two cores in minutes, "hN" for the easy task stretched to need
// about N turns (the horizon study).
func registry() map[string]constructor {
	return map[string]constructor{
		"docedit": func(level string, _ options) (Task, error) {
			cfg := docedit.DefaultConfig()
			if level != "" {
				// Short documents (12–24 words, every copy of which the
				// conversation carries: the draft, each current document
				// the environment shows), one or two edits.
				cfg.MinSentences, cfg.MaxSentences = 2, 3
				cfg.MinWords, cfg.MaxWords = 12, 24
				cfg.MinEdits, cfg.MaxEdits = 1, 2
			}
			if h, ok := horizonLevel(level); ok {
				// An edit takes about two turns: asking, then applying.
				e := min(max(h/2, 1), 5)
				cfg.MinSentences, cfg.MaxSentences = 3, 4
				cfg.MinWords, cfg.MaxWords = 30, 60
				cfg.MinEdits, cfg.MaxEdits = e, e
			}
			t, err := docedit.New(cfg)
			if err != nil {
				return nil, err
			}
			return t, nil
		},
		"mathchat": func(level string, o options) (Task, error) {
			cfg := mathchat.DefaultConfig()
			cfg.Calculator = !o.noCalculator
			if level != "" {
				// One operation on one-digit numbers, one or two hidden
				// facts, no distractor. With the calculator, one hidden
				// fact left the base policy little to learn (0.82 success
				// against the human proxy); a second one to ask for puts
				// the room back into the dialogue.
				cfg.Steps, cfg.MaxNumber, cfg.MaxAnswer, cfg.Distractors = 1, 9, 90, 0
				cfg.MinHidden, cfg.MaxHidden = 1, 2
			}
			if h, ok := horizonLevel(level); ok {
				// Each hidden fact costs a question and an answer; more
				// steps give more room for slips to retry.
				n := min(max((h+2)/4, 1), 3)
				cfg.MinHidden, cfg.MaxHidden = n, n
				cfg.Steps = min(max(h/4, 1), 6)
				if cfg.Steps > 1 {
					cfg.MaxAnswer = 999
				}
			}
			t, err := mathchat.New(cfg)
			if err != nil {
				return nil, err
			}
			return t, nil
		},
	}
}

// horizonLevel reads "hN".
func horizonLevel(level string) (int, bool) {
	n, ok := strings.CutPrefix(level, "h")
	if !ok {
		return 0, false
	}
	h, err := strconv.Atoi(n)
	return h, err == nil && h > 0
}

// checkLevel reports a level no task knows.
func checkLevel(name, level string) error {
	if level == "" || level == "easy" {
		return nil
	}
	if _, ok := horizonLevel(level); ok {
		return nil
	}
	return fmt.Errorf("task %q: unknown level %q (want easy or hN, e.g. h8)", name, level)
}
