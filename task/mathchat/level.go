package mathchat

import "github.com/calibrl/calibrl/task/level"

// Level returns the configuration of a level (package level names them):
// the defaults for "", for "easy" one operation on one-digit numbers with
// one or two hidden facts and no distractor, and for "hN" the easy problem
// grown to need about N turns.
func Level(name string) (Config, error) {
	l, err := level.Parse(name)
	if err != nil {
		return Config{}, err
	}
	cfg := DefaultConfig()
	if l.Small {
		// With the calculator, one hidden fact left the base policy
		// little to learn (0.82 success against the human proxy); a
		// second one to ask for puts the room back into the dialogue.
		cfg.Steps, cfg.MaxNumber, cfg.MaxAnswer, cfg.Distractors = 1, 9, 90, 0
		cfg.MinHidden, cfg.MaxHidden = 1, 2
	}
	if h := l.Horizon; h > 0 {
		// Each hidden fact costs a question and an answer; more steps
		// give more room for slips to retry.
		n := min(max((h+2)/4, 1), 3)
		cfg.MinHidden, cfg.MaxHidden = n, n
		cfg.Steps = min(max(h/4, 1), 6)
		if cfg.Steps > 1 {
			cfg.MaxAnswer = 999
		}
	}
	return cfg, nil
}
