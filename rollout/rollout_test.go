package rollout

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// guessTask: the user holds a number in [0,10); the agent guesses; the user
// says higher/lower and ends on the right guess.
type guessTask struct{}

func (guessTask) Name() string { return "guess" }
func (guessTask) Spec() string { return "guess" }
func (guessTask) Instance(split string, index int) (*dialog.Oracle, *dialog.View, error) {
	if index < 0 {
		return nil, nil, errors.New("bad index")
	}
	truth := (index*7 + len(split)) % 10
	return &dialog.Oracle{Task: "guess", ID: fmt.Sprint(index), Split: split, Truth: fmt.Sprint(truth), Persona: dialog.Persona{Patience: 4}},
		&dialog.View{Task: "guess", Instructions: "guess the number"}, nil
}
func (guessTask) Score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	last := ""
	for _, m := range msgs {
		if m.Role == dialog.RoleAssistant {
			last = m.Content
		}
	}
	ok := last == o.Truth
	r := 0.0
	if ok {
		r = 1
	}
	return dialog.Score{Outcome: last, Reward: r, Success: ok}
}

type guessUser struct{}

func (guessUser) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	return &guessUserSession{o: o, rng: rng}
}

type guessUserSession struct {
	o      *dialog.Oracle
	rng    *rand.Rand
	misses int
	reason dialog.EndReason
}

func (s *guessUserSession) Open(context.Context) (string, error) { return "guess my number", nil }
func (s *guessUserSession) Reply(_ context.Context, h []dialog.Message) (string, bool, error) {
	last := h[len(h)-1].Content
	if last == s.o.Truth {
		s.reason = dialog.Solved
		return "yes!", true, nil
	}
	s.misses++
	if s.misses >= s.o.Persona.Patience {
		s.reason = dialog.GaveUp
		return "I give up", true, nil
	}
	if s.rng.Float64() < 0.3 {
		return "hmm, no", false, nil
	}
	if last < s.o.Truth {
		return "higher", false, nil
	}
	return "lower", false, nil
}
func (s *guessUserSession) EndReason() dialog.EndReason { return s.reason }

type randomAgent struct{}

func (randomAgent) NewSession(_ *dialog.View, rng *rand.Rand) dialog.AgentSession {
	return &randomAgentSession{rng: rng}
}

type randomAgentSession struct{ rng *rand.Rand }

func (s *randomAgentSession) Act(_ context.Context, h []dialog.Message) (string, error) {
	return fmt.Sprint(s.rng.IntN(10)), nil
}

// batchAgent is randomAgent answering a whole step at once.
type batchAgent struct {
	randomAgent
	calls int
}

func (b *batchAgent) ActBatch(ctx context.Context, ss []dialog.AgentSession, hs [][]dialog.Message) ([]string, error) {
	b.calls++
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i], _ = s.Act(ctx, hs[i])
	}
	return out, nil
}

func run(t *testing.T, agent dialog.Agent, cfg Config) []dialog.Episode {
	t.Helper()
	eps, err := Run(context.Background(), guessTask{}, agent, guessUser{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

func TestDeterministicAcrossWorkersAndBatching(t *testing.T) {
	base := Config{Split: "test", Instances: 20, Group: 3, Seed: 7, MaxTurns: 6, Workers: 1}
	want := run(t, randomAgent{}, base)
	for _, w := range []int{2, 5, 64} {
		cfg := base
		cfg.Workers = w
		if got := run(t, randomAgent{}, cfg); !reflect.DeepEqual(got, want) {
			t.Fatalf("workers=%d: episodes differ from workers=1", w)
		}
	}
	b := &batchAgent{}
	if got := run(t, b, base); !reflect.DeepEqual(got, want) {
		t.Fatal("batch agent: episodes differ from the per-session agent")
	}
	if b.calls == 0 || b.calls > base.MaxTurns {
		t.Fatalf("batch agent called %d times, want 1..%d (one per step)", b.calls, base.MaxTurns)
	}
	other := base
	other.Seed = 8
	if reflect.DeepEqual(run(t, randomAgent{}, other), want) {
		t.Fatal("seed 8 gave the same episodes as seed 7")
	}
}

func TestEpisodeShapeAndEndReasons(t *testing.T) {
	eps := run(t, randomAgent{}, Config{Split: "train", Instances: 50, Group: 2, Seed: 1, MaxTurns: 3})
	if len(eps) != 100 {
		t.Fatalf("got %d episodes, want 100", len(eps))
	}
	seen := map[dialog.EndReason]int{}
	for i, ep := range eps {
		if ep.Index != i/2 || ep.Sample != i%2 {
			t.Fatalf("episode %d is (%d,%d), want (%d,%d)", i, ep.Index, ep.Sample, i/2, i%2)
		}
		if ep.Messages[0].Role != dialog.RoleUser {
			t.Fatalf("%s: first message from %s, want user", ep.ID, ep.Messages[0].Role)
		}
		if ep.Turns > 3 {
			t.Fatalf("%s: %d turns past the limit 3", ep.ID, ep.Turns)
		}
		seen[ep.End]++
		switch ep.End {
		case dialog.Solved:
			if !ep.Success || ep.Reward != 1 {
				t.Fatalf("%s: solved but success=%v reward=%v", ep.ID, ep.Success, ep.Reward)
			}
		case dialog.MaxTurns:
			if ep.Turns != 3 {
				t.Fatalf("%s: max_turns after %d turns", ep.ID, ep.Turns)
			}
		}
		tokens := 0
		for _, m := range ep.Messages {
			tokens += m.Tokens
		}
		if tokens != ep.Tokens || tokens == 0 {
			t.Fatalf("%s: tokens %d, messages sum to %d", ep.ID, ep.Tokens, tokens)
		}
	}
	if seen[dialog.Solved] == 0 || seen[dialog.MaxTurns] == 0 {
		t.Fatalf("end reasons %v: want both solved and max_turns", seen)
	}
}

type failingUser struct{ guessUser }

func (failingUser) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	return failingSession{}
}

type failingSession struct{}

func (failingSession) Open(context.Context) (string, error) { return "hi", nil }
func (failingSession) Reply(context.Context, []dialog.Message) (string, bool, error) {
	return "", false, errors.New("endpoint down")
}

func TestErrorsNameTheEpisode(t *testing.T) {
	_, err := Run(context.Background(), guessTask{}, randomAgent{}, failingUser{}, Config{Split: "test", Instances: 3})
	if err == nil || !strings.Contains(err.Error(), "endpoint down") || !strings.Contains(err.Error(), "guess/test/") {
		t.Fatalf("got %v, want the user's error naming the episode", err)
	}
	if _, err := Run(context.Background(), guessTask{}, randomAgent{}, guessUser{}, Config{Split: "test"}); err == nil {
		t.Fatal("zero episodes: want an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, guessTask{}, randomAgent{}, guessUser{}, Config{Split: "test", Instances: 5}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: got %v", err)
	}
}

func TestEpisodeSeedSpreads(t *testing.T) {
	seen := map[uint64]bool{}
	for i := 0; i < 100; i++ {
		for g := 0; g < 8; g++ {
			s := EpisodeSeed(1, i, g)
			if seen[s] {
				t.Fatalf("EpisodeSeed(1,%d,%d) repeats", i, g)
			}
			seen[s] = true
		}
	}
}

func TestShareSplitsInstancesBetweenAgents(t *testing.T) {
	agents := []dialog.Agent{randomAgent{}, &batchAgent{}, randomAgent{}}
	eps, err := Share(context.Background(), guessTask{}, agents, []string{"a", "b", "c"}, guessUser{},
		Config{Split: "train", Start: 5, Instances: 8, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 8 {
		t.Fatalf("got %d episodes, want 8", len(eps))
	}
	// 3, 3, 2 episodes on instances 5..7, 8..10, 11..12.
	wantAgent := []string{"a", "a", "a", "b", "b", "b", "c", "c"}
	for i, ep := range eps {
		if ep.Agent != wantAgent[i] || ep.Index != 5+i {
			t.Fatalf("episode %d: agent %s instance %d, want %s %d", i, ep.Agent, ep.Index, wantAgent[i], 5+i)
		}
	}
	if _, err := Share(context.Background(), guessTask{}, agents, []string{"a"}, guessUser{}, Config{Split: "train", Instances: 3}); err == nil {
		t.Fatal("names and agents of different lengths: want an error")
	}
}
