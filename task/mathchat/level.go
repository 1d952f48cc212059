package mathchat

import "github.com/calibrl/calibrl/task/level"

// Level returns the configuration of a level (package level names them):
// the defaults for "", for "easy" one operation on one-digit numbers with
// one or two hidden facts and no distractor, and for "hN" a shopping
// problem that withholds hiddenFacts(N) of its numbers, so that it needs
// about N turns: the careful agent plays 2.0, 3.2, 6.5 and 13.1 turns on
// average against the human proxy at h2, h4, h8 and h16 (200 test
// problems each, solving 0.90, 0.985, 0.985 and 0.985 of them within H
// turns; sloppy 2.0, 3.6, 6.9 and 13.6 turns, solving 0.43, 0.89, 0.935
// and 0.975). Before, the hN levels withheld at most three numbers and
// careful needed 2.0, 2.1, 3.2 and 4.0 turns.
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
		// Each hidden fact costs a question and an answer, so a problem
		// with n of them needs n+1 turns; n grows with H and leaves a
		// quarter of the turns for what goes wrong (a fact asked for
		// twice, a question back, a rejected answer). Shopping problems
		// carry the facts: each kind of item bought has its count and its
		// price, so the facts are alike and a dialogue of many questions
		// stays one kind of problem as H grows.
		n := hiddenFacts(h)
		cfg.Families = []string{"shopping"}
		cfg.Items = min((n+1)/2, MaxItems)
		cfg.MinHidden, cfg.MaxHidden = n, n
		if cfg.Items > 3 {
			// Distinct numbers need a wider range (shopping's draw).
			cfg.MaxNumber = 20
		}
		cfg.MaxAnswer = 9999
	}
	return cfg, nil
}

// hiddenFacts is how many facts a problem of the hH level withholds:
// three quarters of the turns less the answer's, at least one, at most
// MaxFacts−1.
func hiddenFacts(h int) int { return min(max(3*h/4-1, 1), MaxFacts-1) }
