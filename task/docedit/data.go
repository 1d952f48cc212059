package docedit

// WithCorpus returns a copy of t (same level and options) whose targets
// are the passages of the corpus at path (Config.Corpus; see LoadCorpus).
func (t *Task) WithCorpus(path string) (*Task, error) {
	cfg := t.cfg
	cfg.Corpus = path
	return New(cfg)
}
