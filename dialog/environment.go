package dialog

// An Environment is the part of a task's world that acts on the turns of
// a conversation, as a document editor applies the edit commands in an
// agent's turn before the user answers it, or a ledger notes the numbers
// a user has told. After each agent turn, and after each reply of the
// user's that the conversation goes on from (not the opening), the
// rollout asks it for a note; a note that is not empty is recorded as a
// system message right after the turn, so everyone who speaks next reads
// it. Trainers give it no loss, since no speaker wrote it. A tool (Tool)
// writes inside a turn as it is sampled; an environment answers a
// finished one and sees the conversation.
type Environment interface {
	// Respond returns the note on the last message of history, an agent
	// turn or a reply, or "" for none. v is the agent's view of the
	// episode.
	Respond(v *View, history []Message) string
}

// EnvironmentOf returns the environment of a task, or nil when it has
// none: a task offers one with a method Environment() Environment.
func EnvironmentOf(t any) Environment {
	if p, ok := t.(interface{ Environment() Environment }); ok {
		return p.Environment()
	}
	return nil
}

// IsNote reports whether m, a message of a conversation's history, is an
// environment's note: the rollout records notes, and only notes, as
// system messages among the turns. Every speaker reads a note where it
// stands, as a system message with the environment's text, whoever
// renders the conversation: calibrl's own models (chatlm), agents and
// users behind an endpoint (remote), exported datasets (export).
func IsNote(m Message) bool { return m.Role == RoleSystem }
