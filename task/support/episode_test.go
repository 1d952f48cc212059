package support

import (
	"reflect"
	"sync"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/tasktest"
)

func newTask(t testing.TB, level string) *Task {
	t.Helper()
	cfg, err := Level(level)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// rate plays n test episodes of an agent profile against a user kind and
// returns the share that succeeded.
func rate(t testing.TB, tk *Task, user dialog.UserKind, profile string, n int, show bool) float64 {
	t.Helper()
	u, err := tk.User(user)
	if err != nil {
		t.Fatal(err)
	}
	a, err := tk.Agent(profile)
	if err != nil {
		t.Fatal(err)
	}
	won := 0
	for i := range n {
		o, v, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		ep := tasktest.MustPlay(t, tk, o, v, u, a, uint64(i), 10)
		if ep.Success {
			won++
		} else if show {
			t.Logf("%s %s %s: %s", o.ID, o.Family, ep.End, o.Truth)
			for _, m := range ep.Messages {
				t.Logf("  %s: %s", m.Role, m.Content)
			}
		}
	}
	return float64(won) / float64(n)
}

// TestConcurrentSessions plays episodes from several goroutines with one
// task, its users and agents, as the rollout does, and gets the
// conversations one goroutine gets; with -race it checks they share no
// mutable state.
func TestConcurrentSessions(t *testing.T) {
	tk := newTask(t, "")
	naive, _ := tk.User("naive")
	human, _ := tk.User("human")
	users := []dialog.User{human, naive}
	agents := map[string]dialog.Agent{}
	for _, p := range tk.Profiles() {
		agents[p], _ = tk.Agent(p)
	}
	run := func(g int) ([]dialog.Message, error) {
		var all []dialog.Message
		for i := range 10 {
			o, v, err := tk.Instance("train", i)
			if err != nil {
				return nil, err
			}
			ep, err := tasktest.Play(tk, o, v, users[g%2], agents[tk.Profiles()[g%len(tk.Profiles())]], uint64(i), 8)
			if err != nil {
				return nil, err
			}
			all = append(all, ep.Messages...)
		}
		return all, nil
	}
	want := make([][]dialog.Message, 8)
	for g := range 8 {
		want[g], _ = run(g)
	}
	got := make([][]dialog.Message, 8)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[g], errs[g] = run(g)
		}()
	}
	wg.Wait()
	for g := range 8 {
		if errs[g] != nil || !reflect.DeepEqual(got[g], want[g]) {
			t.Fatalf("goroutine %d: %v, or conversations differ from one goroutine's", g, errs[g])
		}
	}
}
