package serve

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/export"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/remote"
	"github.com/calibrl/calibrl/reply"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task"
)

// The system prompt of the wire format carries everything the simulator's
// own context holds: read back, it gives the same OracleContext and the
// same checks, for every task and level.
func TestUserSystemPromptReadsBackToTheSimulatorsContext(t *testing.T) {
	for _, name := range []string{"mathchat", "mathchat:easy", "mathchat:h8", "docedit", "docedit:easy"} {
		tk, err := task.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		judge := chatlm.TaskJudge(tk)
		for _, split := range task.Splits {
			for i := 0; i < 40; i++ {
				o, _, err := tk.Instance(split, i)
				if err != nil {
					t.Fatal(err)
				}
				got, err := remote.ParseUserSystemPrompt(remote.UserSystemPrompt(o))
				if err != nil {
					t.Fatalf("%s %s/%d: %v", name, split, i, err)
				}
				if a, b := chatlm.OracleContext(got), chatlm.OracleContext(o); a != b {
					t.Fatalf("%s %s/%d: context read back\n%s\nwant\n%s", name, split, i, a, b)
				}
				for _, answer := range []string{"The answer is " + o.Truth + ".", "The answer is 7919.", o.Truth, "What is the price?"} {
					turn := []dialog.Message{{Role: dialog.RoleAssistant, Content: answer}}
					if a, b := judge(got, turn), judge(o, turn); a != b {
						t.Fatalf("%s %s/%d: check of %q read back %q, want %q", name, split, i, answer, a, b)
					}
				}
			}
		}
	}
}

// testSim is a freshly initialised simulator on mathchat:easy with the
// task's check: its turns are noise, but noise the served and in-process
// paths must draw identically.
func testSim(t *testing.T) (task.Task, *chatlm.User, []dialog.Episode) {
	t.Helper()
	tk, err := task.Lookup("mathchat:easy")
	if err != nil {
		t.Fatal(err)
	}
	var eps []dialog.Episode
	for _, profile := range []string{"careful", "sloppy", "guesser"} {
		a, _ := tk.Agent(profile)
		h, _ := tk.User("human")
		e, err := rollout.Run(context.Background(), tk, a, h, rollout.Config{Split: "train", Instances: 12, Seed: 5, MaxTurns: 6})
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, e...)
	}
	tok, err := chatlm.TrainTokenizer(context.Background(), eps, 400)
	if err != nil {
		t.Fatal(err)
	}
	m, err := chatlm.NewModel(tok, lm.Config{Context: 2048, Dim: 16, Layers: 1, Heads: 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	gen := chatlm.GenConfig{MaxNewTokens: 24, Temperature: 1, TopP: 0.9}
	return tk, &chatlm.User{Model: m, Oracle: true, Judge: chatlm.TaskJudge(tk), Gen: gen}, eps
}

// Every user turn of logged episodes, sent in the format export --kind sim
// writes, is translated into exactly the conversation the in-process
// learned user renders (checks included), and with the same seed the
// served simulator writes the same turn as the in-process one.
func TestServedSimulatorIsTheInProcessOne(t *testing.T) {
	tk, u, eps := testSim(t)
	sim := NewSimulator(u, tk, 1)
	rows := export.SimRows(eps)
	for i := range eps {
		ep := &eps[i]
		for j, m := range ep.Messages {
			if m.Role != dialog.RoleAssistant {
				continue
			}
			history := ep.Messages[:j+1]
			wire := remote.RolePlayChat(&ep.Oracle, history, false, false)
			conv, _, _, err := sim.Translate(wire)
			if err != nil {
				t.Fatalf("episode %s turn %d: %v", ep.ID, j, err)
			}
			if want := chatlm.UserMessages(&ep.Oracle, history, true, u.Judge); !reflect.DeepEqual(conv, want) {
				t.Fatalf("episode %s turn %d: served context\n%+v\nwant\n%+v", ep.ID, j, conv, want)
			}
			// The exported row holds the same chat up to this turn.
			if n := len(wire); !reflect.DeepEqual(rows[i].Messages[:n-1], toExport(wire[:n-1])) {
				t.Fatalf("episode %s: the served wire format and export --kind sim differ", ep.ID)
			}
		}
		if i >= 6 {
			continue
		}
		seed := int64(1000 + i)
		history := ep.Messages[:2]
		served, err := sim.Complete(context.Background(), ChatRequest{Messages: remote.RolePlayChat(&ep.Oracle, history, false, false), Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		var r reply.User
		if err := json.Unmarshal([]byte(served.Text), &r); err != nil {
			t.Fatalf("reply %q is not the JSON shape: %v", served.Text, err)
		}
		text, end, err := u.NewSession(&ep.Oracle, rand.New(rand.NewPCG(uint64(seed), 1))).Reply(context.Background(), history)
		if err != nil {
			t.Fatal(err)
		}
		// JSON carries only UTF-8: invalid bytes of a noisy model's text
		// arrive as U+FFFD, as encoding/json writes them.
		if r.Message != jsonText(text) || r.End != end {
			t.Errorf("episode %s: served %+v, in-process %q end %v", ep.ID, r, text, end)
		}
	}
}

func jsonText(s string) string {
	b, _ := json.Marshal(s)
	var out string
	json.Unmarshal(b, &out)
	return out
}

func toExport(msgs []dialog.Message) []export.Message {
	out := make([]export.Message, len(msgs))
	for i, m := range msgs {
		out[i] = export.Message{Role: string(m.Role), Content: m.Content}
	}
	return out
}

// Closed loop: a remote:MODEL user pointed at the served simulator plays
// the same episodes as the in-process learned user, within sampling error
// (their random streams differ: the remote user seeds each request).
//
// On the tiny preset's simulator size every conversation outgrows the
// context: the closed loop holds there too.
func TestRemoteUserAgainstServedSimulatorMatchesLearned(t *testing.T) {
	for _, size := range []struct {
		name string
		sim  func(*testing.T) (task.Task, *chatlm.User, []dialog.Episode)
	}{{"2048-token context", testSim}, {"tiny preset", tinySim}} {
		t.Run(size.name, func(t *testing.T) {
			tk, u, _ := size.sim(t)
			closedLoop(t, tk, u)
		})
	}
}

func closedLoop(t *testing.T, tk task.Task, u *chatlm.User) {
	s, err := New(DefaultConfig(), Options{Task: task.Lookup, Chat: NewSimulator(u, tk, 1), ChatName: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	temp := 1.0
	rc := remote.DefaultConfig()
	rc.Temperature = &temp
	rc.Endpoints = []remote.Endpoint{{Name: "served", BaseURL: ts.URL + "/v1", Model: "sim", MaxConcurrency: 4}}
	pool, err := remote.NewPool(rc, "sim", nil)
	if err != nil {
		t.Fatal(err)
	}
	agent, _ := tk.Agent("careful")
	const n = 120
	cfg := rollout.Config{Split: "test", Instances: n, Seed: 11, MaxTurns: 4}
	local, err := rollout.Run(context.Background(), tk, agent, u, cfg)
	if err != nil {
		t.Fatal(err)
	}
	served, err := rollout.Run(context.Background(), tk, agent, remote.NewUser(pool), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		of   func(*dialog.Episode) float64
	}{
		{"success", func(e *dialog.Episode) float64 { return b2f(e.Success) }},
		{"turns", func(e *dialog.Episode) float64 { return float64(e.Turns) }},
		{"user ended", func(e *dialog.Episode) float64 { return b2f(e.End.ByUser()) }},
	} {
		ml, vl := meanVar(local, f.of)
		ms, vs := meanVar(served, f.of)
		se := math.Sqrt(vl/n + vs/n)
		t.Logf("%s: in-process %.3f, served %.3f (n=%d each, difference %.3f ± %.3f at 95%%)", f.name, ml, ms, n, ms-ml, 1.96*se)
		if math.Abs(ms-ml) > 3.3*se+1e-9 {
			t.Errorf("%s: served %.3f, in-process %.3f: more than 3.3 standard errors (%.3f) apart", f.name, ms, ml, se)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func meanVar(eps []dialog.Episode, f func(*dialog.Episode) float64) (mean, variance float64) {
	for i := range eps {
		mean += f(&eps[i])
	}
	mean /= float64(len(eps))
	for i := range eps {
		d := f(&eps[i]) - mean
		variance += d * d
	}
	return mean, variance / float64(len(eps)-1)
}
