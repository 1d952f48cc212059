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
// sampled, when not nil, gives for message i the exact ids a model
// generated for it (closing token included): they are used instead of
// re-encoding the text, so training sees the tokens that were sampled.
// The sequence is cut to at most maxLen tokens.
func (m *Model) Encode(msgs []tokenizer.Message, train tokenizer.Role, sampled [][]int, maxLen int) (Sequence, error) {
	var ids []int
	var trained []bool
	for i, msg := range msgs {
		var turn []int
		if i < len(sampled) && sampled[i] != nil {
			open, _, err := m.Tok.RenderPrompt(nil, msg.Role)
			if err != nil {
				return Sequence{}, fmt.Errorf("encode message %d: %w", i, err)
			}
			turn = append(open, sampled[i]...)
		} else {
			var err error
			if turn, _, err = m.Tok.RenderChat(msg2(msg)); err != nil {
				return Sequence{}, fmt.Errorf("encode message %d: %w", i, err)
			}
		}
		role, err := tokenizer.ParseRole(msg.Role)
		if err != nil {
			return Sequence{}, fmt.Errorf("encode message %d: %w", i, err)
		}
		for j := range turn {
			trained = append(trained, role == train && j > 0)
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

func msg2(m tokenizer.Message) []tokenizer.Message { return []tokenizer.Message{m} }

// AgentSequence is an episode as the policy learns it: its view and the
// dialog, the loss on the agent's turns.
func (m *Model) AgentSequence(ep *dialog.Episode) (Sequence, error) {
	return m.Encode(AgentMessages(&ep.View, ep.Messages), tokenizer.RoleAssistant, nil, m.LM.Config.Context)
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
	return m.Encode(msgs, tokenizer.RoleUser, nil, m.LM.Config.Context)
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
