package docedit

import "github.com/calibrl/calibrl/task/level"

// Level returns the configuration of a level (package level names them):
// the defaults for "", for "easy" short documents with one or two edits,
// and for "hN" longer documents with about N/2 edits, to need about N
// turns.
func Level(name string) (Config, error) {
	l, err := level.Parse(name)
	if err != nil {
		return Config{}, err
	}
	cfg := DefaultConfig()
	if l.Small {
		// Short documents (12–24 words, every copy of which the
		// conversation carries: the draft, each current document the
		// environment shows), one or two edits.
		cfg.MinSentences, cfg.MaxSentences = 2, 3
		cfg.MinWords, cfg.MaxWords = 12, 24
		cfg.MinEdits, cfg.MaxEdits = 1, 2
	}
	if h := l.Horizon; h > 0 {
		// An edit takes about two turns: asking, then applying.
		e := min(max(h/2, 1), 5)
		cfg.MinSentences, cfg.MaxSentences = 3, 4
		cfg.MinWords, cfg.MaxWords = 30, 60
		cfg.MinEdits, cfg.MaxEdits = e, e
	}
	return cfg, nil
}
