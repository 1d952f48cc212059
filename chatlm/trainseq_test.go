package chatlm_test

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/chatlm/chatlmtest"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/tokenizer"
)

// A turn's sequence is its exact prompt and sampled ids, the loss on the
// sampled ids only.
func TestTurnSequenceMask(t *testing.T) {
	s := chatlm.TurnSequence([]int{1, 2, 3}, chatlm.Turn{IDs: []int{7, 8, 9}})
	if want := []int{1, 2, 3, 7, 8, 9}; !reflect.DeepEqual(s.IDs, want) {
		t.Fatalf("ids %v, want %v", s.IDs, want)
	}
	// mask[t] weights the prediction of ids[t+1]: positions 2, 3, 4
	// predict 7, 8, 9.
	if want := []float32{0, 0, 1, 1, 1, 0}; !reflect.DeepEqual(s.Mask, want) {
		t.Fatalf("mask %v, want %v", s.Mask, want)
	}
}

// Ids a tool forced into the turn carry no loss.
func TestTurnSequenceMasksForcedIDs(t *testing.T) {
	s := chatlm.TurnSequence([]int{1, 2}, chatlm.Turn{IDs: []int{7, 8, 9, 10}, Forced: []bool{false, true, true, false}})
	// Positions 1..4 predict 7, 8, 9, 10; 8 and 9 were forced.
	if want := []float32{0, 1, 0, 0, 1, 0}; !reflect.DeepEqual(s.Mask, want) {
		t.Fatalf("mask %v, want %v", s.Mask, want)
	}
}

// wrongUser answers every agent turn "no, that is wrong." and never ends
// the conversation: only the turn limit does.
type wrongUser struct{}

type wrongSession struct{ o *dialog.Oracle }

func (wrongUser) NewSession(o *dialog.Oracle, _ *rand.Rand) dialog.UserSession {
	return wrongSession{o}
}

func (s wrongSession) Open(context.Context) (string, error) { return s.o.Opening, nil }

func (wrongSession) Reply(context.Context, []dialog.Message) (string, bool, error) {
	return "no, that is wrong.", false, nil
}

// repeatable is a token of m's tokenizer that a run of it re-encodes to:
// a turn made of it re-renders, as text, to the ids that were sampled.
func repeatable(t *testing.T, m *chatlm.Model) int {
	t.Helper()
	for _, s := range []string{"7", "8", "9", "6", "5"} {
		ids := m.Tok.Encode(s)
		if len(ids) == 1 && reflect.DeepEqual(m.Tok.Encode(s+s+s), []int{ids[0], ids[0], ids[0]}) {
			return ids[0]
		}
	}
	t.Fatal("no single-digit token repeats as itself")
	return 0
}

// Every sequence of a played conversation reproduces the context its
// tokens were sampled in: the trained positions hold exactly the sampled
// ids, and Forward's log-probs there equal the ones the sampler recorded.
// A short conversation whose turns re-render exactly is one sequence; one
// that outgrows the context is one sequence per agent turn; so is one
// whose turns were cut by the length limit.
func TestSequencesReproduceSampling(t *testing.T) {
	eps := chatlmtest.AddEpisodes(4, 1)
	m := chatlmtest.TinyModel(t, eps)
	digit := repeatable(t, m)
	end, _ := m.Tok.SpecialID(tokenizer.End)
	// Turns of three digits and <|end|>: clean, and they re-render.
	shaped := chatlm.GenConfig{MaxNewTokens: 4, Temperature: 1, TopP: 1, Allow: func(_ int, sofar []int) []int {
		if len(sofar) < 3 {
			return []int{digit}
		}
		return []int{end}
	}}
	cut := chatlm.GenConfig{MaxNewTokens: 6, Temperature: 1, TopP: 1} // an untrained model rarely closes a turn
	task := &kvTask{eps: eps}
	for _, c := range []struct {
		name     string
		gen      chatlm.GenConfig
		maxTurns int
		perTurn  bool
	}{
		{"short, re-rendering", shaped, 2, false},
		{"outgrowing the context", shaped, 14, true},
		{"cut by the length limit", cut, 3, true},
	} {
		agent := &chatlm.Agent{Model: m, Gen: c.gen}
		played, sessions, err := rollout.Play(context.Background(), task, agent, wrongUser{}, rollout.Config{Split: "train", Instances: 2, MaxTurns: c.maxTurns, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		for i := range played {
			s := sessions[i].(*chatlm.AgentSession)
			ss, err := s.Sequences(&played[i])
			if err != nil {
				t.Fatal(err)
			}
			if ss.PerTurn != c.perTurn {
				t.Fatalf("%s: per turn %v, want %v", c.name, ss.PerTurn, c.perTurn)
			}
			want := 1
			if ss.PerTurn {
				want = len(s.Turns)
			}
			if len(ss.Seqs) != want || len(ss.Logp) != want {
				t.Fatalf("%s: %d sequences and %d log-prob rows for %d turns, want %d", c.name, len(ss.Seqs), len(ss.Logp), len(s.Turns), want)
			}
			var wantIDs, gotIDs []int
			var wantLogp, gotLogp []float32
			for _, turn := range s.Turns {
				wantIDs, wantLogp = append(wantIDs, turn.IDs...), append(wantLogp, turn.LogProbs...)
			}
			for k, seq := range ss.Seqs {
				if len(seq.IDs) > m.LM.Config.Context {
					t.Fatalf("%s: sequence %d has %d tokens, context is %d", c.name, k, len(seq.IDs), m.LM.Config.Context)
				}
				if ss.Logp[k] == nil {
					t.Fatalf("%s: sequence %d carries no sampled log-probs", c.name, k)
				}
				logp, err := m.LM.Forward(seq.IDs, 1, len(seq.IDs), nil)
				if err != nil {
					t.Fatal(err)
				}
				for p, w := range seq.Mask {
					if w > 0 {
						gotIDs, gotLogp = append(gotIDs, seq.IDs[p+1]), append(gotLogp, logp[p])
						if math.Abs(float64(ss.Logp[k][p]-logp[p])) > 1e-5 {
							t.Fatalf("%s: sequence %d position %d: sampled log-prob %g, Forward %g", c.name, k, p, ss.Logp[k][p], logp[p])
						}
					}
				}
			}
			if !reflect.DeepEqual(gotIDs, wantIDs) {
				t.Fatalf("%s: trained ids %v, want the sampled ones %v", c.name, gotIDs, wantIDs)
			}
			for j := range gotLogp {
				if math.Abs(float64(gotLogp[j]-wantLogp[j])) > 1e-3 {
					t.Fatalf("%s: token %d: Forward log-prob %g, sampled %g", c.name, j, gotLogp[j], wantLogp[j])
				}
			}
		}
	}
}
