package tokenizer

import (
	"fmt"
)

// Role says whose turn a token belongs to, so a trainer can put the loss on
// one side only: the assistant's tokens for the policy, the user's for the
// calibrated simulator.
type Role uint8

const (
	RoleNone      Role = iota // no turn (padding); RenderChat never emits it
	RoleSystem                // "system"
	RoleUser                  // "user"
	RoleAssistant             // "assistant"
)

var roleNames = [...]string{RoleNone: "none", RoleSystem: "system", RoleUser: "user", RoleAssistant: "assistant"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", r)
}

// ParseRole maps "system", "user" and "assistant" to their Role.
func ParseRole(s string) (Role, error) {
	for r, name := range roleNames {
		if r != int(RoleNone) && name == s {
			return Role(r), nil
		}
	}
	return RoleNone, fmt.Errorf("tokenizer: unknown role %q (want system, user or assistant)", s)
}

// roleToken is the special token that opens a turn of r.
func roleToken(r Role) string {
	switch r {
	case RoleSystem:
		return System
	case RoleUser:
		return User
	default:
		return Assistant
	}
}

// Message is one turn of a conversation.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
	// Done marks the turn that ends the episode (a user leaving the
	// conversation): it closes with <|done|> instead of <|end|>.
	Done bool `json:"done,omitempty"`
}

// RenderChat renders a conversation as
//
//	<|system|>…<|end|><|user|>…<|end|><|assistant|>…<|end|>
//
// (a turn with Done closes with <|done|>) and returns, beside the ids, the
// role of every token. A turn's opening role token and its closing token
// belong to that turn, so training on a role also teaches when its turns end.
// Content is encoded literally: special spellings in it stay plain text.
func (t *Tokenizer) RenderChat(msgs []Message) (ids []int, roles []Role, err error) {
	ids, roles, err = t.appendTurns(nil, nil, msgs)
	if err != nil {
		return nil, nil, err
	}
	return ids, roles, nil
}

// RenderPrompt renders msgs as RenderChat does, then opens a turn for next
// ("user" or "assistant"): the ids a model continues to write that turn.
// The opening token gets role next.
func (t *Tokenizer) RenderPrompt(msgs []Message, next string) (ids []int, roles []Role, err error) {
	r, err := ParseRole(next)
	if err != nil {
		return nil, nil, fmt.Errorf("render prompt: %w", err)
	}
	open, err := t.special1(roleToken(r))
	if err != nil {
		return nil, nil, fmt.Errorf("render prompt: %w", err)
	}
	ids, roles, err = t.appendTurns(nil, nil, msgs)
	if err != nil {
		return nil, nil, err
	}
	return append(ids, open), append(roles, r), nil
}

func (t *Tokenizer) appendTurns(ids []int, roles []Role, msgs []Message) ([]int, []Role, error) {
	end, err := t.special1(End)
	if err != nil {
		return nil, nil, fmt.Errorf("render chat: %w", err)
	}
	done, err := t.special1(Done)
	if err != nil {
		return nil, nil, fmt.Errorf("render chat: %w", err)
	}
	for i, m := range msgs {
		r, err := ParseRole(m.Role)
		if err != nil {
			return nil, nil, fmt.Errorf("render chat: message %d: %w", i, err)
		}
		open, err := t.special1(roleToken(r))
		if err != nil {
			return nil, nil, fmt.Errorf("render chat: message %d: %w", i, err)
		}
		n := len(ids)
		ids = append(ids, open)
		ids = t.AppendEncode(ids, m.Content)
		if m.Done {
			ids = append(ids, done)
		} else {
			ids = append(ids, end)
		}
		for range len(ids) - n {
			roles = append(roles, r)
		}
	}
	return ids, roles, nil
}

func (t *Tokenizer) special1(name string) (int, error) {
	id, ok := t.specials[name]
	if !ok {
		return 0, fmt.Errorf("tokenizer has no special token %s", name)
	}
	return int(id), nil
}

// StopIDs returns the ids that end a generated turn: <|end|> and <|done|>
// (those the tokenizer has).
func (t *Tokenizer) StopIDs() []int {
	var out []int
	for _, s := range []string{End, Done} {
		if id, ok := t.specials[s]; ok {
			out = append(out, int(id))
		}
	}
	return out
}

// Reply is a generated turn read back by ParseReply.
type Reply struct {
	Text string // the turn's text, without the token that stopped it
	// Stop is the special token that ended the turn: End, Done, or another
	// special the model emitted out of place (a role token, Pad); "" when the
	// ids ran out first (the turn was cut by a length limit).
	Stop string
	// N is the number of ids the turn used, its stop token included.
	N int
}

// Done reports whether the turn ended the episode.
func (r Reply) Done() bool { return r.Stop == Done }

// ParseReply reads the ids a model generated after RenderPrompt's opening
// token, up to and including the first special token.
func (t *Tokenizer) ParseReply(ids []int) Reply {
	for i, id := range ids {
		if t.IsSpecial(id) {
			return Reply{Text: t.Decode(ids[:i]), Stop: t.tokens[id], N: i + 1}
		}
	}
	return Reply{Text: t.Decode(ids), N: len(ids)}
}

// RoleMask returns, per token, whether it belongs to role want: the loss
// mask for training one side of the conversation.
func RoleMask(roles []Role, want Role) []bool {
	m := make([]bool, len(roles))
	for i, r := range roles {
		m[i] = r == want
	}
	return m
}
