package remote

import (
	"fmt"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/reply"
)

// The sections of UserSystemPrompt, in the order it writes them.
const (
	secGoal    = "\n## Your goal\n"
	secOpening = "\n## How you would start\n"
	secFacts   = "\n## What you know\n"
	secDraft   = "\n## The draft the assistant starts from\n"
	secEdits   = "\n## The changes you want (describe them vaguely first, concretely when asked; one or two at a time)\n"
	secPersona = "\n## Your persona\n"
	secTruth   = "\n## Ground truth, for judging only, never to be revealed\n"
	truthEnd   = "\nNever state, hint at, confirm or paste the ground truth"
	hiddenMark = "(hidden: say it only when the assistant asks about it) "
)

// ParseUserSystemPrompt reads back the oracle context UserSystemPrompt
// wrote: the goal, opening, facts, draft, edits, persona and ground truth.
// It is how a server that speaks this wire format (calibrl serve --sim)
// rebuilds the context its own model was trained on. What the prompt does
// not carry is left empty (the task, the instance id, the worked
// solution); the persona's threshold comes back rounded to a whole number,
// as the prompt writes it, and each edit's description comes back as its
// Detail.
func ParseUserSystemPrompt(text string) (*dialog.Oracle, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	heads := []string{secGoal, secOpening, secFacts, secDraft, secEdits, secPersona, secTruth}
	body := map[string]string{}
	pos := strings.Index(text, secGoal)
	if pos < 0 {
		return nil, fmt.Errorf("system prompt: no %q section: not the role-play prompt calibrl writes (remote.UserSystemPrompt, export --kind sim)", strings.TrimSpace(secGoal))
	}
	cur := secGoal
	pos += len(secGoal)
	for i := 1; cur != ""; i++ {
		// The next section is the first of the later headings that occurs.
		next, at := "", -1
		for _, h := range heads[i:] {
			if j := strings.Index(text[pos:], h); j >= 0 && (at < 0 || j < at) {
				next, at = h, j
			}
		}
		if next == "" {
			body[cur] = text[pos:]
			break
		}
		body[cur] = text[pos : pos+at]
		for heads[i] != next {
			i++
		}
		cur, pos = next, pos+at+len(next)
	}
	for _, h := range []string{secPersona, secTruth} {
		if _, ok := body[h]; !ok {
			return nil, fmt.Errorf("system prompt: no %q section", strings.TrimSpace(h))
		}
	}
	o := &dialog.Oracle{
		Instruction: strings.TrimSpace(body[secGoal]),
		Opening:     strings.TrimSpace(body[secOpening]),
		Draft:       strings.TrimSpace(body[secDraft]),
	}
	truth, _, ok := cutLast(body[secTruth], truthEnd)
	if !ok {
		return nil, fmt.Errorf("system prompt: the ground truth section does not end with %q", strings.TrimSpace(truthEnd))
	}
	o.Truth = strings.TrimSpace(truth)
	for _, line := range lines(body[secFacts]) {
		f, ok := strings.CutPrefix(line, "- ")
		if !ok {
			return nil, fmt.Errorf("system prompt: fact %q is not a \"- \" item", line)
		}
		text, hidden := strings.CutPrefix(f, hiddenMark)
		o.Facts = append(o.Facts, dialog.Fact{Text: text, Hidden: hidden})
	}
	for _, line := range lines(body[secEdits]) {
		e, ok := strings.CutPrefix(line, "- ")
		if !ok {
			return nil, fmt.Errorf("system prompt: edit %q is not a \"- \" item", line)
		}
		o.Edits = append(o.Edits, dialog.Edit{Detail: e})
	}
	p := &o.Persona
	persona := strings.TrimSpace(body[secPersona])
	if _, err := fmt.Sscanf(persona, "Patience: you tolerate about %d unhelpful replies before giving up. Verbosity %g, clarity %g and typo rate %g",
		&p.Patience, &p.Verbosity, &p.Clarity, &p.TypoRate); err != nil {
		return nil, fmt.Errorf("system prompt: persona %q: %w", persona, err)
	}
	if _, th, ok := strings.Cut(persona, "close enough to what you want (about "); ok {
		if _, err := fmt.Sscanf(th, "%g/100", &p.Threshold); err != nil {
			return nil, fmt.Errorf("system prompt: persona threshold %q: %w", th, err)
		}
	}
	return o, nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// ReadRolePlayChat is RolePlayChat read backwards: from the chat a
// role-played user answers (the system prompt, the opening cue, the
// user's own turns as "assistant" replies in the JSON shape, the agent's
// as "user"), it returns the oracle context and the dialogue the right
// way round (the user's turns as RoleUser, the agent's as RoleAssistant,
// the environment's notes, system messages after the prompt, as notes).
// The opening cue may be left out; an assistant turn that is not in the
// JSON shape is read as plain text. Errors name the message.
func ReadRolePlayChat(msgs []dialog.Message) (*dialog.Oracle, []dialog.Message, error) {
	if len(msgs) == 0 || msgs[0].Role != dialog.RoleSystem {
		return nil, nil, fmt.Errorf("messages[0]: want the system message with the user's role-play prompt (remote.UserSystemPrompt, as export --kind sim writes it)")
	}
	o, err := ParseUserSystemPrompt(msgs[0].Content)
	if err != nil {
		return nil, nil, fmt.Errorf("messages[0]: %w", err)
	}
	rest := msgs[1:]
	start := 1
	if len(rest) > 0 && rest[0].Role == dialog.RoleUser && strings.TrimSpace(rest[0].Content) == OpeningCue {
		rest, start = rest[1:], 2
	}
	var history []dialog.Message
	for i, m := range rest {
		switch m.Role {
		case dialog.RoleAssistant:
			text := m.Content
			if r, err := reply.ParseUser(m.Content); err == nil {
				text = r.Message
			}
			if text != "" {
				history = append(history, dialog.Message{Role: dialog.RoleUser, Content: text})
			}
		case dialog.RoleUser:
			history = append(history, dialog.Message{Role: dialog.RoleAssistant, Content: m.Content})
		case dialog.RoleSystem:
			if len(history) == 0 {
				return nil, nil, fmt.Errorf("messages[%d]: a system message before the opening: after the prompt, system messages are the environment's notes on the turns", start+i)
			}
			history = append(history, dialog.Message{Role: dialog.RoleSystem, Content: m.Content})
		default:
			return nil, nil, fmt.Errorf("messages[%d]: role %q after the system prompt (want user for the agent's turns, assistant for the simulated user's, system for the environment's notes)", start+i, m.Role)
		}
	}
	last := len(history) - 1
	for last >= 0 && dialog.IsNote(history[last]) {
		last--
	}
	if last >= 0 && history[last].Role != dialog.RoleAssistant {
		return nil, nil, fmt.Errorf("messages[%d]: the chat ends with the simulated user's own turn: it answers the agent, so the last message must be the agent's (role user) or the environment's note on it", len(msgs)-1)
	}
	return o, history, nil
}
