package dialog

// System is the agent's system turn: its instructions and, for a document
// task, the draft it starts from after a "Draft:" line.
func (v *View) System() string {
	if v.Draft == "" {
		return v.Instructions
	}
	return v.Instructions + "\nDraft:\n" + v.Draft
}

// AgentChat is the conversation as the agent sees it: the view as the
// system message (View.System), then every message of history in its own
// role, the environment's notes (IsNote) as system messages where they
// stand. It is the one rendering of the agent's side: calibrl's own models
// are prompted and trained on it (chatlm.AgentMessages), agents behind an
// endpoint are sent it (remote), and policy data is exported in it
// (export), so a policy trained on exported data reads what the embedded
// policy reads. The system message is there even when empty, as the
// embedded policy's prompt has the turn.
func AgentChat(v *View, history []Message) []Message {
	out := make([]Message, 0, len(history)+1)
	out = append(out, Message{Role: RoleSystem, Content: v.System()})
	for _, m := range history {
		out = append(out, Message{Role: m.Role, Content: m.Content}) // the token count is the log's, not the chat's
	}
	return out
}
