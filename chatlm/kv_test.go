package chatlm_test

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/chatlm/chatlmtest"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

// kvTask plays chatlmtest's sum episodes.
type kvTask struct{ eps []dialog.Episode }

func (kvTask) Name() string { return "add" }
func (kvTask) Spec() string { return "add" }

func (k kvTask) Instance(split string, i int) (*dialog.Oracle, *dialog.View, error) {
	e := k.eps[i%len(k.eps)]
	o, v := e.Oracle, e.View
	o.Opening = e.Messages[0].Content
	return &o, &v, nil
}

func (kvTask) Score(*dialog.Oracle, []dialog.Message) dialog.Score { return dialog.Score{} }

// uncached wraps a model agent or user so that the rollout sees neither
// its batch methods nor KeepContext: every turn is sampled alone, from the
// whole conversation, with no cache kept between turns.
type uncachedAgent struct{ a *chatlm.Agent }

type plainAgent struct{ dialog.AgentSession }

func (u uncachedAgent) NewSession(v *dialog.View, rng *rand.Rand) dialog.AgentSession {
	return plainAgent{u.a.NewSession(v, rng)}
}

type uncachedUser struct{ u *chatlm.User }

type plainUser struct{ dialog.UserSession }

func (u uncachedUser) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	return plainUser{u.u.NewSession(o, rng)}
}

// Keeping each episode's key/value cache across turns (what rollout.Play
// does with model agents and users) gives exactly the episodes, sampled
// ids and log-probs that sampling every turn from the whole conversation
// gives, greedy and sampled, also once conversations outgrow the context
// and Prompt drops old turns (the cache is then read again from where the
// prompts part), and with a tool forcing ids into the agent's turns.
func TestKeptContextMatchesRecomputation(t *testing.T) {
	eps := chatlmtest.AddEpisodes(6, 4)
	m := chatlmtest.TinyModel(t, eps)
	sim := chatlmtest.TinyModel(t, eps)
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range sim.LM.Params.Data {
		sim.LM.Params.Data[i] += float32(rng.NormFloat64() * 0.05)
	}
	for _, temp := range []float64{0, 1} {
		gen := chatlm.GenConfig{MaxNewTokens: 20, Temperature: temp, TopP: 1}
		a := &chatlm.Agent{Model: m, Gen: gen, Tool: fortyTwo{}}
		u := &chatlm.User{Model: sim, Oracle: true, Gen: chatlm.GenConfig{MaxNewTokens: 16, Temperature: 1, TopP: 0.9}}
		rc := rollout.Config{Split: "train", Instances: 6, Group: 2, MaxTurns: 5, Seed: 9}
		kept, keptSessions, err := rollout.Play(context.Background(), &kvTask{eps}, a, u, rc)
		if err != nil {
			t.Fatal(err)
		}
		full, fullSessions, err := rollout.Play(context.Background(), &kvTask{eps}, uncachedAgent{a}, uncachedUser{u}, rc)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(kept, full) {
			t.Fatalf("temperature %v: episodes with kept caches differ from recomputed ones", temp)
		}
		long, forced := 0, 0
		for i := range kept {
			k := keptSessions[i].(*chatlm.AgentSession).Turns
			f := fullSessions[i].(plainAgent).AgentSession.(*chatlm.AgentSession).Turns
			if !reflect.DeepEqual(k, f) {
				t.Fatalf("temperature %v episode %d: turns with kept caches %+v, recomputed %+v", temp, i, k, f)
			}
			for _, turn := range k {
				if turn.Forced != nil {
					forced++
				}
			}
			n := 0
			for _, msg := range chatlm.AgentMessages(&kept[i].View, kept[i].Messages) {
				n += m.CountTokens(msg.Content) + 2
			}
			if n > m.LM.Config.Context-gen.MaxNewTokens {
				long++
			}
		}
		if long == 0 || forced == 0 {
			t.Fatalf("temperature %v: %d conversations outgrew the context, %d turns were forced into: want some of both", temp, long, forced)
		}
	}
}
