package train

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/task/docedit"
)

// addGuesser is a behaviour agent for the toy task: right with chance
// 1/2, otherwise off by one.
type addGuesser struct{}

type addGuesserSession struct {
	rng *rand.Rand
}

func (addGuesser) NewSession(_ *dialog.View, rng *rand.Rand) dialog.AgentSession {
	return &addGuesserSession{rng: rng}
}

func (s *addGuesserSession) Act(_ context.Context, h []dialog.Message) (string, error) {
	var a, b int
	if _, err := fmt.Sscanf(h[0].Content, "what is %d plus %d?", &a, &b); err != nil {
		return "", err
	}
	sum := a + b + s.rng.IntN(2)
	return fmt.Sprintf("%d + %d = %d.", a, b, sum), nil
}

func addLogs(t *testing.T, n int) []dialog.Episode {
	t.Helper()
	eps, err := rollout.Run(context.Background(), addTask{}, addGuesser{}, addUser{},
		rollout.Config{Split: "train", Instances: n, MaxTurns: 2, Seed: 11, AgentName: "guesser"})
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

func addBehaviour(name string) (dialog.Agent, error) {
	if name != "guesser" {
		return nil, fmt.Errorf("unknown agent %q", name)
	}
	return addGuesser{}, nil
}

func smallStatic() StaticConfig {
	c := StaticConfig{RLConfig: smallGRPO(), Reward: StaticBehaviour}
	// A candidate for an early turn is overruled by the behaviour agent's
	// later answer, so its group scores alike: enough prompts per
	// iteration that some group has a spread and an update happens.
	c.InstancesPerStep = 6
	return c
}

// Completing a logged conversation from any cut, with the logged agent
// turn as the candidate and the logging user's own random stream,
// reproduces the logged conversation: the replay restores both scripted
// sessions' state exactly.
func TestBranchReplaysLoggedConversations(t *testing.T) {
	for _, name := range []string{"mathchat", "docedit"} {
		tk, err := task.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		human, err := tk.User("human")
		if err != nil {
			t.Fatal(err)
		}
		var logs []dialog.Episode
		for i, profile := range tk.Profiles() {
			a, err := tk.Agent(profile)
			if err != nil {
				t.Fatal(err)
			}
			eps, err := rollout.Run(context.Background(), tk, a, human,
				rollout.Config{Split: "train", Start: 10 * i, Instances: 6, MaxTurns: 8, Seed: 3, AgentName: profile})
			if err != nil {
				t.Fatal(err)
			}
			logs = append(logs, eps...)
		}
		s := &staticRun{rlRun: &rlRun{task: tk, trainUser: human, cfg: RLConfig{MaxTurns: 8}}, agents: map[string]dialog.Agent{}}
		for _, ep := range logs {
			s.agents[ep.Agent], _ = tk.Agent(ep.Agent)
		}
		cuts, noted := 0, 0
		for i := range logs {
			ep := &logs[i]
			for cut, m := range ep.Messages {
				if m.Role != dialog.RoleAssistant {
					continue
				}
				if cut+1 < len(ep.Messages) && dialog.IsNote(ep.Messages[cut+1]) {
					noted++ // the branch must note the candidate as the rollout did
				}
				msgs := append([]dialog.Message(nil), ep.Messages[:cut+1]...)
				br, err := s.branch(context.Background(), prompt{ep: ep, cut: cut}, msgs, ep.Seed)
				if err != nil {
					t.Fatal(err)
				}
				if err := complete(context.Background(), s.agents, human, []*rollout.Live{br}); err != nil {
					t.Fatal(err)
				}
				if got, want := texts(br.Ep.Messages), texts(ep.Messages); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s (%s) cut at %d:\ngot  %q\nwant %q", ep.ID, ep.Agent, cut, got, want)
				}
				cuts++
			}
		}
		if cuts < 20 {
			t.Fatalf("%s: only %d cuts checked", name, cuts)
		}
		if name == "docedit" && noted == 0 {
			t.Fatal("docedit: no cut at a command turn the environment noted")
		}
	}
}

func texts(msgs []dialog.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role) + ": " + m.Content
	}
	return out
}

// Static context RL end to end on the toy logs: updates happen, the keys
// are logged, the monitor runs, and the run is deterministic and
// resumable.
func TestStaticSmokeDeterministicResumable(t *testing.T) {
	logs := addLogs(t, 12)
	cfg := smallStatic()
	run := func(cfg StaticConfig, out string, ctx context.Context, log func(map[string]any)) ([]float32, RLResult, error) {
		m := toyPolicy(t, 80)
		res, err := Static(ctx, m, addTask{}, logs, addBehaviour, addUser{}, addUser{}, cfg, out, log)
		return m.LM.Params.Data, res, err
	}
	var iters, mons int
	a, res, err := run(cfg, filepath.Join(t.TempDir(), "a"), context.Background(), func(r map[string]any) {
		if r["monitor/human_reward"] != nil {
			mons++
		}
		if r["rollout/reward_mean"] != nil {
			iters++
			if r["train/updates"].(int) > 0 {
				checkKeys(t, r, iterKeys...)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if iters != cfg.Iterations || mons != 3 || res.Updates == 0 {
		t.Fatalf("%d iteration records, %d monitor records, %d updates; want %d, 3, > 0", iters, mons, res.Updates, cfg.Iterations)
	}
	b, _, err := run(cfg, filepath.Join(t.TempDir(), "b"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different weights")
	}
	out := filepath.Join(t.TempDir(), "c")
	ctx, cancel := context.WithCancel(context.Background())
	if _, _, err := run(cfg, out, ctx, func(r map[string]any) {
		if r["step"] == 1 && r["rollout/reward_mean"] != nil {
			cancel()
		}
	}); err == nil {
		t.Fatal("interrupted run: want an error")
	}
	c, _, err := run(cfg, out, context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, c) {
		t.Fatal("resumed run's weights differ from the uninterrupted run's")
	}
}

// Static context RL on mathchat logs with a model-backed simulator (a
// chatlm.User, answering in batches) runs end to end.
func TestStaticMathchatWithModelSimulator(t *testing.T) {
	tk, err := task.Lookup("mathchat")
	if err != nil {
		t.Fatal(err)
	}
	human, _ := tk.User("human")
	careful, _ := tk.Agent("careful")
	logs, err := rollout.Run(context.Background(), tk, careful, human,
		rollout.Config{Split: "train", Instances: 4, MaxTurns: 6, Seed: 1, AgentName: "careful"})
	if err != nil {
		t.Fatal(err)
	}
	m := toyPolicy(t, 0)
	sim := &chatlm.User{Model: m, Oracle: true, Gen: chatlm.GenConfig{MaxNewTokens: 8, Temperature: 1, TopP: 1}}
	cfg := smallStatic()
	cfg.Iterations, cfg.MaxTurns, cfg.MonitorEvery = 2, 6, 0
	var recs []map[string]any
	res, err := Static(context.Background(), m, tk, logs, tk.Agent, sim, nil, cfg, t.TempDir(), func(r map[string]any) { recs = append(recs, r) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations != 2 {
		t.Fatalf("%d iterations, want 2", res.Iterations)
	}
	last := recs[len(recs)-1]
	if turns := last["rollout/turns"].(float64); turns < 1 || turns > 6 {
		t.Fatalf("completed conversations average %v agent turns, want within 1..6", turns)
	}
}

// Static RL's outcome reward judges a docedit candidate in its logged
// conversation: a command turn at a cut edits the document as it stands
// there, so it earns what the full revision to the same document earns.
// The logged command turns are the candidates; their cuts are prompts.
func TestStaticOutcomeRewardAppliesCommandsAtTheCut(t *testing.T) {
	tk, err := task.Lookup("docedit")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := tk.User("human")
	var logs []dialog.Episode
	for _, profile := range tk.Profiles() {
		a, _ := tk.Agent(profile)
		eps, err := rollout.Run(context.Background(), tk, a, h, rollout.Config{Split: "train", Instances: 20, Seed: 9, MaxTurns: 8})
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, eps...)
	}
	var prompts []prompt
	for i := range logs {
		prompts = cutPrompts(tk, &logs[i], 8, true, prompts)
	}
	commands, right, alone := 0, 0, 0
	for _, p := range prompts {
		logged := p.ep.Messages[p.cut]
		if strings.Contains(logged.Content, docedit.DocMarker) {
			continue
		}
		commands++
		doc := dialog.Message{Role: dialog.RoleAssistant, Content: docedit.DocMarker + "\n" + tk.Score(&p.ep.Oracle, p.ep.Messages[:p.cut+1]).Outcome}
		got, want := outcomeReward(tk, p, logged), outcomeReward(tk, p, doc)
		if got != want {
			t.Errorf("%s at message %d: the commands earn %g, the full revision %g", p.ep.ID, p.cut, got, want)
		}
		right += int(got)
		if _, r := dialog.Verdict(tk, &p.ep.Oracle, []dialog.Message{logged}); r != (got == 1) {
			alone++
		}
	}
	if commands == 0 || right == 0 || alone == 0 {
		t.Fatalf("%d command cuts, %d rewarded, %d judged otherwise on the draft alone: the test shows nothing", commands, right, alone)
	}
}

// With FillRounds, each iteration draws rounds of prompts until it holds
// InstancesPerStep informative groups and trains on those alone: the
// groups it trains on are never flat, it keeps more informative groups
// than one round does, and it is deterministic and resumes exactly.
func TestStaticFillRoundsKeepsInformativeGroups(t *testing.T) {
	logs := addLogs(t, 24)
	cfg := smallStatic()
	cfg.Reward, cfg.InstancesPerStep, cfg.Iterations, cfg.MonitorEvery = StaticOutcome, 3, 4, 0
	run := func(cfg StaticConfig, out string, ctx context.Context, log func(map[string]any)) ([]float32, error) {
		m := toyPolicy(t, 80)
		_, err := Static(ctx, m, addTask{}, logs, addBehaviour, addUser{}, nil, cfg, out, log)
		return m.LM.Params.Data, err
	}
	flatShare := func(cfg StaticConfig) (float64, []map[string]any) {
		var recs []map[string]any
		if _, err := run(cfg, filepath.Join(t.TempDir(), "x"), context.Background(), func(r map[string]any) {
			if r[MetricFlatGroups] != nil {
				recs = append(recs, r)
			}
		}); err != nil {
			t.Fatal(err)
		}
		var s float64
		for _, r := range recs {
			s += r[MetricFlatGroups].(float64)
		}
		return s / float64(len(recs)), recs
	}
	without, _ := flatShare(cfg)
	cfg.FillRounds = 6
	with, recs := flatShare(cfg)
	if without == 0 {
		t.Fatalf("one round left no flat group (share %v): the test needs flat ones", without)
	}
	if with != 0 {
		t.Errorf("filled iterations trained on flat groups: share %v (%v without filling)", with, without)
	}
	for _, r := range recs {
		if r["static/fill_rounds"] == nil || r["static/informative_drawn"] == nil {
			t.Fatalf("no fill metrics in %v", r)
		}
	}
	a, err := run(cfg, filepath.Join(t.TempDir(), "a"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "c")
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := run(cfg, out, ctx, func(r map[string]any) {
		if r["step"] == 2 && r["rollout/reward_mean"] != nil {
			cancel()
		}
	}); err == nil {
		t.Fatal("interrupted run: want an error")
	}
	c, err := run(cfg, out, context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, c) {
		t.Fatal("a resumed filled run's weights differ from the uninterrupted run's")
	}
	cfg.FillRounds = maxFillRounds + 1
	if err := cfg.Validate(); err == nil {
		t.Error("too many fill rounds: no error")
	}
}

// With GradTokens, filling stops at a budget in gradient tokens instead of
// a count of groups: every iteration that did not run out of rounds trains
// at least the target, and passes it by less than one group's tokens
// (the last group kept), so a larger target trains more. Validate refuses
// a target without fill rounds and one out of range.
func TestStaticGradTokensFillsToTarget(t *testing.T) {
	logs := addLogs(t, 24)
	cfg := smallStatic()
	cfg.Reward, cfg.InstancesPerStep, cfg.Iterations, cfg.MonitorEvery = StaticOutcome, 3, 4, 0
	cfg.FillRounds = 8
	gradTokens := func(cfg StaticConfig) []map[string]any {
		var recs []map[string]any
		m := toyPolicy(t, 80)
		if _, err := Static(context.Background(), m, addTask{}, logs, addBehaviour, addUser{}, nil, cfg, filepath.Join(t.TempDir(), "x"), func(r map[string]any) {
			if r[MetricGradTokens] != nil {
				recs = append(recs, r)
			}
		}); err != nil {
			t.Fatal(err)
		}
		if len(recs) != cfg.Iterations {
			t.Fatalf("%d iterations logged, want %d", len(recs), cfg.Iterations)
		}
		return recs
	}
	groups := gradTokens(cfg) // by groups: InstancesPerStep informative ones
	var byGroups int
	for _, r := range groups {
		byGroups = max(byGroups, r[MetricGradTokens].(int))
	}
	if byGroups == 0 {
		t.Fatal("no gradient tokens at all: the test shows nothing")
	}
	for _, target := range []int{byGroups / 2, 2 * byGroups} {
		cfg.GradTokens = target
		var sum int
		for _, r := range gradTokens(cfg) {
			got, rounds := r[MetricGradTokens].(int), r["static/fill_rounds"].(float64)
			sum += got
			if got < target && int(rounds) < cfg.FillRounds {
				t.Errorf("target %d: iteration %v trained %d tokens after %v of %d rounds", target, r["step"], got, rounds, cfg.FillRounds)
			}
			// A group here is G candidates of a few tokens each: passing the
			// target by more than a round's worth means it kept filling.
			if got > target+byGroups {
				t.Errorf("target %d: iteration %v trained %d tokens, more than the target and a round (%d)", target, r["step"], got, byGroups)
			}
		}
		if target > byGroups && sum <= byGroups*cfg.Iterations {
			t.Errorf("target %d trained %d tokens over %d iterations, no more than filling by groups (%d each at most)", target, sum, cfg.Iterations, byGroups)
		}
	}
	bad := cfg
	bad.FillRounds = 0
	if err := bad.Validate(); err == nil {
		t.Error("gradient tokens without fill rounds: no error")
	}
	bad = cfg
	bad.GradTokens = maxGradTokens + 1
	if err := bad.Validate(); err == nil {
		t.Error("gradient tokens past the bound: no error")
	}
}
