package mathchat

// WithGSM8K returns a copy of t (same level and options) whose instances
// come from the GSM8K-format folder or file at path (Config.GSM8K).
func (t *Task) WithGSM8K(path string) (*Task, error) {
	cfg := t.cfg
	cfg.GSM8K = path
	return New(cfg)
}
