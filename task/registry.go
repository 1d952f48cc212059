package task

import (
	"github.com/calibrl/calibrl/task/docedit"
	"github.com/calibrl/calibrl/task/mathchat"
)

// registry maps task names to builders taking a level (package level
// names them; each task says what its levels hold: docedit.Level,
// mathchat.Level) and the name's options.
func registry() map[string]constructor {
	return map[string]constructor{
		"docedit": func(level string, o options) (Task, error) {
			cfg, err := docedit.Level(level)
			if err != nil {
				return nil, err
			}
			cfg.Quote, cfg.AcceptanceReward, cfg.Naive = o.quote, o.acceptance, o.naive(cfg.Naive)
			t, err := docedit.New(cfg)
			if err != nil {
				return nil, err
			}
			return t, nil
		},
		"mathchat": func(level string, o options) (Task, error) {
			cfg, err := mathchat.Level(level)
			if err != nil {
				return nil, err
			}
			cfg.Calculator = !o.noCalculator
			cfg.Ledger, cfg.AcceptanceReward, cfg.Naive = o.ledger, o.acceptance, o.naive(cfg.Naive)
			t, err := mathchat.New(cfg)
			if err != nil {
				return nil, err
			}
			return t, nil
		},
	}
}
