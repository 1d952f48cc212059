package mathchat

import (
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/tasktest"
)

// successRate runs n test-split episodes of one agent profile against one
// user kind.
func successRate(t testing.TB, tk *Task, user dialog.UserKind, profile string, n int) float64 {
	u, err := tk.User(user)
	if err != nil {
		t.Fatal(err)
	}
	a, err := tk.Agent(profile)
	if err != nil {
		t.Fatal(err)
	}
	wins := 0
	for i := 0; i < n; i++ {
		o, v, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		ep := tasktest.MustPlay(t, tk, o, v, u, a, uint64(i), 12)
		if ep.Success {
			wins++
		}
	}
	return float64(wins) / float64(n)
}

// TestNaiveInflatesWeakAgents is the acceptance check: the naive
// simulator's artifacts make weak agents look better than the human proxy
// does, while the careful agent does well against both.
func TestNaiveInflatesWeakAgents(t *testing.T) {
	tk, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	rate := map[string]map[string]float64{}
	for _, user := range []string{"human", "naive"} {
		rate[user] = map[string]float64{}
		for _, p := range tk.Profiles() {
			rate[user][p] = successRate(t, tk, dialog.UserKind(user), p, n)
			t.Logf("%-6s %-14s success %.3f", user, p, rate[user][p])
		}
	}
	for _, p := range []string{"guesser", "answer-seeker"} {
		if rate["naive"][p] <= rate["human"][p] {
			t.Errorf("%s: success against naive %.3f, want above human's %.3f", p, rate["naive"][p], rate["human"][p])
		}
	}
	for _, user := range []string{"human", "naive"} {
		if rate[user]["careful"] < 0.85 {
			t.Errorf("careful against %s: success %.3f, want ≥ 0.85", user, rate[user]["careful"])
		}
	}
}

func BenchmarkEpisodeCarefulHuman(b *testing.B) {
	tk, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	a, _ := tk.Agent("careful")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		o, v, _ := tk.Instance("test", i%500)
		tasktest.MustPlay(b, tk, o, v, Human{}, a, uint64(i), 12)
	}
}

// TestConcurrentSessions runs episodes from several goroutines, as the
// rollout does; with -race it checks that tasks, users and agents share
// no mutable state.
func TestConcurrentSessions(t *testing.T) {
	tk, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	naive, _ := tk.User("naive")
	users := []dialog.User{Human{}, naive}
	done := make(chan []dialog.Message, 8)
	for g := 0; g < 8; g++ {
		go func() {
			a, _ := tk.Agent(tk.Profiles()[g%len(tk.Profiles())])
			var last []dialog.Message
			for i := 0; i < 10; i++ {
				o, v, err := tk.Instance("train", i)
				if err != nil {
					t.Error(err)
					break
				}
				ep, err := tasktest.Play(tk, o, v, users[g%2], a, uint64(i), 8)
				if err != nil {
					t.Error(err)
					break
				}
				last = ep.Messages
			}
			done <- last
		}()
	}
	for range 8 {
		if msgs := <-done; len(msgs) == 0 {
			t.Error("a goroutine played no episode")
		}
	}
}
