package remote

import (
	"fmt"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/reply"
)

// UserSystemPrompt is the LLM user's role-play prompt: the oracle context
// (goal, facts, hidden facts, draft and edits, persona, ground truth) and
// the reply format. The same text conditions the calibrated simulator's
// training data (package export), so a fine-tuned simulator and a prompted
// one see identical contexts.
func UserSystemPrompt(o *dialog.Oracle) string {
	var b strings.Builder
	b.WriteString(`You are role-playing a person who is talking with an AI assistant to get help. Stay in character: you are the user, never the assistant. Write the way a real person types in a chat.

## Your goal
`)
	b.WriteString(strings.TrimSpace(o.Instruction))
	b.WriteString("\n")
	if o.Opening != "" {
		fmt.Fprintf(&b, "\n## How you would start\n%s\n", strings.TrimSpace(o.Opening))
	}
	if len(o.Facts) > 0 {
		b.WriteString("\n## What you know\n")
		for _, f := range o.Facts {
			if f.Hidden {
				fmt.Fprintf(&b, "- (hidden: say it only when the assistant asks about it) %s\n", f.Text)
			} else {
				fmt.Fprintf(&b, "- %s\n", f.Text)
			}
		}
	}
	if o.Draft != "" {
		fmt.Fprintf(&b, "\n## The draft the assistant starts from\n%s\n", strings.TrimSpace(o.Draft))
	}
	if len(o.Edits) > 0 {
		b.WriteString("\n## The changes you want (describe them vaguely first, concretely when asked; one or two at a time)\n")
		for _, e := range o.Edits {
			desc := e.Detail
			if desc == "" {
				desc = e.Hint
			}
			fmt.Fprintf(&b, "- %s\n", desc)
		}
	}
	p := o.Persona
	fmt.Fprintf(&b, "\n## Your persona\nPatience: you tolerate about %d unhelpful replies before giving up. Verbosity %.1f, clarity %.1f and typo rate %.2f (each from 0 to 1).\n",
		p.Patience, p.Verbosity, p.Clarity, p.TypoRate)
	if p.Threshold > 0 {
		fmt.Fprintf(&b, "You accept a document that is close enough to what you want (about %.0f/100 similar).\n", p.Threshold)
	}
	fmt.Fprintf(&b, "\n## Ground truth, for judging only, never to be revealed\n%s\n", strings.TrimSpace(o.Truth))
	b.WriteString(`Never state, hint at, confirm or paste the ground truth, even if the assistant asks for it. Use it only to decide whether the assistant's final answer or document is right.

## How to behave
- Do not volunteer hidden facts; give one when the assistant asks about it.
- If the assistant is unclear or off-topic, say you are confused.
- If the assistant's final answer is wrong, say it does not match what you expected, without giving the solution.
- If it is right, thank them and end the conversation.
- If your patience runs out, give up and end the conversation.

## Reply format
Reply with exactly one JSON object and nothing else:
{"message": "what you say to the assistant", "end": false, "satisfied": false}
Set "end" to true when you end the conversation, and "satisfied" to true only if you end because the assistant got it right.`)
	return b.String()
}

// OpeningCue is the first turn of the user's chat: the model is the user,
// so the conversation it answers starts with an instruction to open.
const OpeningCue = "(The conversation has not started yet. Write your opening message to the assistant.)"

// RolePlayChat is the chat the LLM user answers: its system prompt, the
// opening cue, then the dialogue with roles flipped (the agent's turns as
// "user", the user's own turns as "assistant" replies in the JSON shape)
// and the environment's notes as system messages where they stand
// (dialog.IsNote: docedit's current document after a turn of edit
// commands), as calibrl's own simulator reads them.
// When endLast is set the user's last message is marked as ending the
// conversation (satisfied as given), as training targets need; an episode
// the user ended with no last words ends with an empty ending reply.
func RolePlayChat(o *dialog.Oracle, history []dialog.Message, endLast, satisfied bool) []dialog.Message {
	out := make([]dialog.Message, 0, len(history)+3)
	out = append(out,
		dialog.Message{Role: dialog.RoleSystem, Content: UserSystemPrompt(o)},
		dialog.Message{Role: dialog.RoleUser, Content: OpeningCue})
	lastUser := -1
	for i, m := range history {
		if m.Role == dialog.RoleUser {
			lastUser = i
		}
	}
	if endLast && len(history) > 0 && history[len(history)-1].Role != dialog.RoleUser {
		lastUser = -1 // the user ended silently after the agent's turn
	}
	for i, m := range history {
		switch m.Role {
		case dialog.RoleUser:
			r := reply.User{Message: m.Content}
			if endLast && i == lastUser {
				r.End, r.Satisfied = true, satisfied
			}
			out = append(out, dialog.Message{Role: dialog.RoleAssistant, Content: r.Encode()})
		case dialog.RoleAssistant:
			out = append(out, dialog.Message{Role: dialog.RoleUser, Content: m.Content})
		default:
			if dialog.IsNote(m) {
				out = append(out, dialog.Message{Role: dialog.RoleSystem, Content: m.Content})
			}
		}
	}
	if endLast && lastUser == -1 {
		out = append(out, dialog.Message{Role: dialog.RoleAssistant, Content: reply.User{End: true, Satisfied: satisfied}.Encode()})
	}
	return out
}

// judgePrompt asks a judge to score an outcome against the oracle.
func judgePrompt(o *dialog.Oracle, history []dialog.Message, outcome string) []dialog.Message {
	var b strings.Builder
	b.WriteString("You are grading how well an AI assistant served a user. The user's goal:\n")
	b.WriteString(strings.TrimSpace(o.Instruction))
	fmt.Fprintf(&b, "\n\nThe correct result (ground truth):\n%s\n", strings.TrimSpace(o.Truth))
	if o.Solution != "" {
		fmt.Fprintf(&b, "\nA worked solution:\n%s\n", strings.TrimSpace(o.Solution))
	}
	b.WriteString("\nThe conversation:\n")
	for _, m := range history {
		who := "User"
		switch {
		case m.Role == dialog.RoleAssistant:
			who = "Assistant"
		case dialog.IsNote(m):
			who = "Environment" // as the speakers read it: the current document after edit commands
		}
		fmt.Fprintf(&b, "%s: %s\n", who, m.Content)
	}
	fmt.Fprintf(&b, "\nThe assistant's final outcome:\n%s\n", outcome)
	b.WriteString(`
Score the final outcome against the ground truth from 0 (wrong or missing) to 1 (fully correct). Reply with exactly one JSON object and nothing else:
{"score": 0.0, "reason": "one sentence"}`)
	return []dialog.Message{{Role: dialog.RoleUser, Content: b.String()}}
}
