package fidelity

import (
	"context"
	"sync"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task"
)

// instanceLog is a task that records every instance its episodes and
// probes open.
type instanceLog struct {
	Task
	mu   sync.Mutex
	seen map[int]bool
}

func (l *instanceLog) Instance(split string, i int) (*dialog.Oracle, *dialog.View, error) {
	l.mu.Lock()
	l.seen[i] = true
	l.mu.Unlock()
	return l.Task.Instance(split, i)
}

// A measurement given Start plays its agents' episodes and its probes on
// the instances from Start on and on no other, so a study that must not
// read the test problems (the verdict's, from 0) can measure the gap and
// the probes on the validation slice.
func TestMeasureReadsOnlyItsSlice(t *testing.T) {
	tk, err := task.Lookup("mathchat:easy")
	if err != nil {
		t.Fatal(err)
	}
	human, err := tk.User(dialog.Human)
	if err != nil {
		t.Fatal(err)
	}
	naive, err := tk.User(dialog.Naive)
	if err != nil {
		t.Fatal(err)
	}
	for _, start := range []int{0, 20000} {
		l := &instanceLog{Task: tk.(Task), seen: map[int]bool{}}
		cfg := Config{Start: start, Instances: 6, Seed: 3, Agents: []string{"careful"}}
		rep, err := Measure(context.Background(), l, "naive", naive, human, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Contexts != 6 || len(rep.Agents) != 1 {
			t.Fatalf("start %d: report of %d contexts, %d agents; want 6 and 1", start, rep.Contexts, len(rep.Agents))
		}
		for i := range l.seen {
			if i < start || i >= start+6 {
				t.Errorf("start %d: opened instance %d, want only %d..%d", start, i, start, start+5)
			}
		}
		if len(l.seen) != 6 {
			t.Errorf("start %d: opened %d instances, want 6", start, len(l.seen))
		}
	}
}
