package dialog

import (
	"context"
	"math/rand/v2"
	"strings"
)

// A Tool writes part of an agent's turn for it, as the agent writes it:
// after each token the environment passes the turn so far, and the text
// the tool returns is appended as if the agent had written it (GSM8K's
// calculator annotations are the model). Everyone reads the inserted text
// as part of the turn; trainers give it no loss, since the agent did not
// choose it (ForcedSpans finds it again in a finished turn).
type Tool interface {
	// Complete returns the text to insert after text, or "" for none.
	Complete(text string) string
}

// ToolOf returns the tool a task gives its agents, or nil when it gives
// none: a task offers one with a method Tool() Tool.
func ToolOf(t any) Tool {
	if p, ok := t.(interface{ Tool() Tool }); ok {
		return p.Tool()
	}
	return nil
}

// ForcedSpans returns the byte ranges [start, end) of text that tool
// wrote: every place where the text so far calls for an insertion and the
// text goes on with it. A nil tool writes nothing.
func ForcedSpans(tool Tool, text string) [][2]int {
	if tool == nil {
		return nil
	}
	var spans [][2]int
	for i := 1; i <= len(text); i++ {
		ins := tool.Complete(text[:i])
		if ins != "" && strings.HasPrefix(text[i:], ins) {
			spans = append(spans, [2]int{i, i + len(ins)})
			i += len(ins) - 1
		}
	}
	return spans
}

// ToolAgent is a scripted agent that uses a tool: Apply rewrites each of
// its finished turns as if the tool had written its part while the turn
// was written (for a scripted agent, which writes a turn at once).
type ToolAgent struct {
	Agent Agent
	Apply func(turn string) string
}

// NewSession starts an episode of the wrapped agent.
func (a *ToolAgent) NewSession(v *View, rng *rand.Rand) AgentSession {
	return &toolSession{s: a.Agent.NewSession(v, rng), apply: a.Apply}
}

type toolSession struct {
	s     AgentSession
	apply func(string) string
}

func (s *toolSession) Act(ctx context.Context, history []Message) (string, error) {
	out, err := s.s.Act(ctx, history)
	if err != nil {
		return "", err
	}
	return s.apply(out), nil
}

// A ConversationTool is a tool whose text depends on the conversation
// before the turn it writes in: docedit's quote tool copies what the user
// wrote. For returns the tool bound to that conversation (the messages
// before the turn, as the agent reads them); ToolFor binds any tool.
type ConversationTool interface {
	Tool
	For(history []Message) Tool
}

// ToolFor returns t bound to history when t reads the conversation
// (ConversationTool), else t itself.
func ToolFor(t Tool, history []Message) Tool {
	if c, ok := t.(ConversationTool); ok {
		return c.For(history)
	}
	return t
}
