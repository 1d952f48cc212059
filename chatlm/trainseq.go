package chatlm

import (
	"fmt"
	"slices"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/tokenizer"
)

// Sampled turns as training sequences. The RL trainers train a policy on
// exactly what it sampled, each token in the context it was sampled in:
// then the sampler's log-probs are the old log-probs of the first update
// (the clipped ratio starts at 1, or within bf16's rounding where the
// sampler ran in bf16 apart: lm.SetSamplePrecision), and no token is
// trained in a context the policy never saw.

// SampledSequences are the training sequences of one conversation a model
// agent played (AgentSession.Sequences).
type SampledSequences struct {
	// Seqs is the whole conversation as one sequence, or (PerTurn) one
	// sequence per agent turn, in the conversation's order.
	Seqs []Sequence
	// Logp[k], when not nil, holds Seqs[k]'s log-probs at its trained
	// positions as the sampler computed them (length len(Seqs[k].IDs),
	// zero elsewhere); nil when they do not line up, and the caller
	// computes them instead.
	Logp [][]float32
	// PerTurn: one sequence for the whole conversation would not have been
	// exact, so it is one per agent turn.
	PerTurn bool
}

// Sequences encodes ep, the conversation the session played, from the ids
// it sampled, the loss on the agent's sampled ids only (not those its tool
// forced), each in the context it was sampled in. The conversation is one
// sequence (turns after the agent's last one carry no loss and are cut)
// when that is exact: every turn was prompted with the whole history, and
// every earlier agent turn re-renders, as text, to the ids that were
// sampled. Otherwise — the history outgrew the context and Model.Prompt
// dropped old turns to leave room for Gen.MaxNewTokens, or a turn was cut
// by the length limit and its text came back with a closing token it
// never sampled — it is one sequence per agent turn, each the exact prompt
// that turn was sampled from followed by its sampled ids (TurnSequence).
// The session's own model, generation limit and tool rebuild the
// contexts, so they are the ones the turns were sampled with.
func (s *AgentSession) Sequences(ep *dialog.Episode) (SampledSequences, error) {
	m, maxNew := s.agent.Model, s.agent.Gen.MaxNewTokens
	context := m.LM.Config.Context
	msgs := ep.Messages
	for len(msgs) > 0 && msgs[len(msgs)-1].Role != dialog.RoleAssistant {
		msgs = msgs[:len(msgs)-1]
	}
	seq, err := m.Encode(AgentMessages(&ep.View, msgs), tokenizer.RoleAssistant, s.Sampled(msgs), s.agent.Tool, context+1)
	if err != nil {
		return SampledSequences{}, fmt.Errorf("sequences of %s: %w", ep.ID, err)
	}
	// Prompts only grow, so if the last turn's prompt (the sequence
	// before its sampled ids) was whole, every turn's was.
	last := 0
	if n := len(s.Turns); n > 0 {
		last = len(s.Turns[n-1].IDs)
	}
	if len(seq.IDs)-last <= context-maxNew && rerendersExactly(m, msgs, s.Turns) {
		return SampledSequences{Seqs: []Sequence{seq}, Logp: [][]float32{sampledLogp(seq, s.Sampled(msgs))}}, nil
	}
	out := SampledSequences{PerTurn: true}
	k := 0
	for j, msg := range msgs {
		if msg.Role != dialog.RoleAssistant || k >= len(s.Turns) {
			continue
		}
		ids, err := m.Prompt(AgentMessages(&ep.View, msgs[:j]), string(dialog.RoleAssistant), maxNew)
		if err != nil {
			return SampledSequences{}, fmt.Errorf("sequences of %s: %w", ep.ID, err)
		}
		seq := TurnSequence(ids, s.Turns[k])
		out.Seqs = append(out.Seqs, seq)
		out.Logp = append(out.Logp, sampledLogp(seq, []*Turn{&s.Turns[k]}))
		k++
	}
	return out, nil
}

// TurnSequence is the prompt a turn was sampled from followed by its
// sampled ids, the loss on those ids only (the closing token included)
// except the ones a tool forced.
func TurnSequence(prompt []int, turn Turn) Sequence {
	ids := append(append([]int(nil), prompt...), turn.IDs...)
	mask := make([]float32, len(ids))
	for t := len(prompt) - 1; t+1 < len(ids); t++ {
		if turn.Forced == nil || !turn.Forced[t+1-len(prompt)] {
			mask[t] = 1
		}
	}
	return Sequence{IDs: ids, Mask: mask}
}

// sampledLogp returns seq's log-probs at its trained positions as the
// sampler computed them, when seq was built from turns as sampled (in
// order, in the very context they were sampled in): the trained positions
// are then exactly the turns' sampled (not forced) ids, in order. It
// returns nil when they are not.
func sampledLogp(seq Sequence, turns []*Turn) []float32 {
	out := make([]float32, len(seq.IDs))
	t := 0 // next position of seq to match
	for _, turn := range turns {
		if turn == nil {
			continue
		}
		if len(turn.LogProbs) != len(turn.IDs) {
			return nil
		}
		for j, id := range turn.IDs {
			if turn.Forced != nil && turn.Forced[j] {
				continue
			}
			for t < len(seq.Mask) && seq.Mask[t] <= 0 {
				t++
			}
			if t+1 >= len(seq.IDs) || seq.IDs[t+1] != id {
				return nil
			}
			out[t] = turn.LogProbs[j]
			t++
		}
	}
	for ; t < len(seq.Mask); t++ {
		if seq.Mask[t] > 0 {
			return nil // trained positions no turn sampled
		}
	}
	return out
}

// rerendersExactly reports whether every agent turn of msgs but the last,
// as the next turn's prompt renders it (its text), is the ids that were
// sampled for it (turns, in order).
func rerendersExactly(m *Model, msgs []dialog.Message, turns []Turn) bool {
	k := 0
	for _, msg := range msgs {
		if msg.Role != dialog.RoleAssistant {
			continue
		}
		if k >= len(turns) {
			return false
		}
		if k == len(turns)-1 {
			return true // the last turn is trained in its own prompt
		}
		ids, _, err := m.Tok.RenderChat([]tokenizer.Message{{Role: string(msg.Role), Content: msg.Content}})
		if err != nil || len(ids) != len(turns[k].IDs)+1 || !slices.Equal(ids[1:], turns[k].IDs) {
			return false
		}
		k++
	}
	return true
}
