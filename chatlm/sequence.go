package chatlm

import (
	"fmt"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/tokenizer"
)

// Sequence is one training conversation. Mask is aligned with the model's
// log-probs: Mask[t] weights the prediction of IDs[t+1].
type Sequence struct {
	IDs  []int
	Mask []float32
}

// Trained counts the positions with weight.
func (s Sequence) Trained() int {
	n := 0
	for _, w := range s.Mask {
		if w > 0 {
			n++
		}
	}
	return n
}

// Encode renders msgs and weights the tokens of role train: each turn's
// text and its closing token (<|end|> or <|done|>), not the role token
// that opens it, because at generation time the prompt supplies that one.
// sampled, when not nil, gives for message i the turn a model generated
// for it: its exact ids (closing token included) are used instead of
// re-encoding the text, so training sees the tokens that were sampled, and
// the ids a tool forced into it carry no weight. tool, when not nil, is
// the tool the train role's turns were written with: in the turns encoded
// from text, what it wrote (dialog.ForcedSpans) is encoded piece by piece
// and carries no weight either. The sequence is cut to at most maxLen
// tokens.
func (m *Model) Encode(msgs []tokenizer.Message, train tokenizer.Role, sampled []*Turn, tool dialog.Tool, maxLen int) (Sequence, error) {
	var ids []int
	var trained []bool
	for i, msg := range msgs {
		role, err := tokenizer.ParseRole(msg.Role)
		if err != nil {
			return Sequence{}, fmt.Errorf("encode message %d: %w", i, err)
		}
		var turn []int
		var forced []bool // aligned with turn; nil: nothing forced
		switch {
		case i < len(sampled) && sampled[i] != nil:
			open, _, err := m.Tok.RenderPrompt(nil, msg.Role)
			if err != nil {
				return Sequence{}, fmt.Errorf("encode message %d: %w", i, err)
			}
			turn = append(open, sampled[i].IDs...)
			if f := sampled[i].Forced; f != nil {
				forced = append(make([]bool, len(open)), f...)
			}
		case role == train && tool != nil && !msg.Done:
			if turn, forced, err = m.encodeWithTool(msg, bindTool(tool, msgs[:i])); err != nil {
				return Sequence{}, fmt.Errorf("encode message %d: %w", i, err)
			}
		default:
			if turn, _, err = m.Tok.RenderChat(msg2(msg)); err != nil {
				return Sequence{}, fmt.Errorf("encode message %d: %w", i, err)
			}
		}
		for j := range turn {
			trained = append(trained, role == train && j > 0 && (forced == nil || !forced[j]))
		}
		ids = append(ids, turn...)
	}
	if len(ids) > maxLen {
		ids, trained = ids[:maxLen], trained[:maxLen]
	}
	mask := make([]float32, len(ids))
	for t := 0; t+1 < len(ids); t++ {
		if trained[t+1] {
			mask[t] = 1
		}
	}
	return Sequence{IDs: ids, Mask: mask}, nil
}

// encodeWithTool renders one turn as RenderChat does, its content encoded
// in pieces at the edges of what tool wrote, as the sampler forced it, and
// marks the tool's ids.
func (m *Model) encodeWithTool(msg tokenizer.Message, tool dialog.Tool) ([]int, []bool, error) {
	whole, _, err := m.Tok.RenderChat(msg2(msg))
	if err != nil {
		return nil, nil, err
	}
	spans := dialog.ForcedSpans(tool, msg.Content)
	if len(spans) == 0 {
		return whole, nil, nil
	}
	turn := whole[:1:1] // the role token
	forced := []bool{false}
	at := 0
	for _, sp := range append(spans, [2]int{len(msg.Content), len(msg.Content)}) {
		for _, piece := range []struct {
			text   string
			forced bool
		}{{msg.Content[at:sp[0]], false}, {msg.Content[sp[0]:sp[1]], true}} {
			n := len(turn)
			turn = m.Tok.AppendEncode(turn, piece.text)
			for range len(turn) - n {
				forced = append(forced, piece.forced)
			}
		}
		at = sp[1]
	}
	turn = append(turn, whole[len(whole)-1]) // the closing token
	return turn, append(forced, false), nil
}

func msg2(m tokenizer.Message) []tokenizer.Message { return []tokenizer.Message{m} }

// AgentSequence is an episode as the policy learns it: its view and the
// dialog, the loss on the agent's turns except what tool (the task's, nil
// for none) wrote in them.
func (m *Model) AgentSequence(ep *dialog.Episode, tool dialog.Tool) (Sequence, error) {
	return m.Encode(AgentMessages(&ep.View, ep.Messages), tokenizer.RoleAssistant, nil, tool, m.LM.Config.Context)
}

// UserSequence is an episode as the user simulator learns it: the oracle
// context (or not, for the ablation) and the dialog, the loss on the
// user's turns, the episode's end marked by <|done|> on the user's last
// turn. judge, with the oracle context, marks delivered outcomes.
func (m *Model) UserSequence(ep *dialog.Episode, oracle bool, judge Judge) (Sequence, error) {
	msgs := UserMessages(&ep.Oracle, ep.Messages, oracle, judge)
	if ep.End.ByUser() {
		if last := len(msgs) - 1; msgs[last].Role == string(dialog.RoleUser) {
			msgs[last].Done = true
		} else {
			msgs = append(msgs, tokenizer.Message{Role: string(dialog.RoleUser), Done: true})
		}
	}
	return m.Encode(msgs, tokenizer.RoleUser, nil, nil, m.LM.Config.Context)
}

// Pack lays sequences out as a [B,T] batch, T the longest length, padded
// with <|pad|>; it returns the tokens, each row's length and the mask.
func (m *Model) Pack(seqs []Sequence) (tokens []int, B, T int, lens []int, mask []float32) {
	B = len(seqs)
	for _, s := range seqs {
		T = max(T, len(s.IDs))
	}
	pad, _ := m.Tok.SpecialID(tokenizer.Pad)
	tokens = make([]int, B*T)
	mask = make([]float32, B*T)
	lens = make([]int, B)
	for b, s := range seqs {
		row := tokens[b*T : (b+1)*T]
		n := copy(row, s.IDs)
		for t := n; t < T; t++ {
			row[t] = pad
		}
		copy(mask[b*T:], s.Mask)
		lens[b] = n
	}
	return tokens, B, T, lens, mask
}
