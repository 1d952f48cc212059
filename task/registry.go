package task

import (
	"github.com/calibrl/calibrl/task/docedit"
	"github.com/calibrl/calibrl/task/mathchat"
)

// registry maps task names to builders taking a level: "" for the task's
// defaults, "easy" for the size the embedded 1–10M-parameter models can
// learn on two cores in minutes (see Levels).
func registry() map[string]constructor {
	return map[string]constructor{
		"docedit": func(level string) (Task, error) {
			cfg := docedit.DefaultConfig()
			if level == "easy" {
				// Short documents, one or two edits.
				cfg.MinSentences, cfg.MaxSentences = 2, 3
				cfg.MinWords, cfg.MaxWords = 18, 36
				cfg.MinEdits, cfg.MaxEdits = 1, 2
			}
			t, err := docedit.New(cfg)
			if err != nil {
				return nil, err
			}
			return t, nil
		},
		"mathchat": func(level string) (Task, error) {
			cfg := mathchat.DefaultConfig()
			if level == "easy" {
				// One operation on one-digit numbers, one hidden fact, no
				// distractor.
				cfg.Steps, cfg.MaxNumber, cfg.MaxAnswer, cfg.Distractors = 1, 9, 90, 0
				cfg.MinHidden, cfg.MaxHidden = 1, 1
			}
			t, err := mathchat.New(cfg)
			if err != nil {
				return nil, err
			}
			return t, nil
		},
	}
}
