package reproduce

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calibrl/calibrl/progress"
	"github.com/calibrl/calibrl/runfolder"
)

// Independent stages run at most jobs at a time, each once, after the
// group before them and before the group after, and every one is marked
// done; done ones are skipped.
func TestRunStagesRunsAGroupSideBySide(t *testing.T) {
	f, err := runfolder.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		mu              sync.Mutex
		started         []string
		running, maxRun atomic.Int32
	)
	mk := func(name string) stage {
		return stage{name: name, do: func(context.Context) error {
			mu.Lock()
			started = append(started, name)
			mu.Unlock()
			n := running.Add(1)
			for {
				m := maxRun.Load()
				if n <= m || maxRun.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
			running.Add(-1)
			return nil
		}}
	}
	if err := os.MkdirAll(filepath.Join(f.Dir, "stages", "g"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.MarkDone("g/skip"); err != nil {
		t.Fatal(err)
	}
	var group []stage
	for i := range 6 {
		group = append(group, mk(fmt.Sprintf("g/%d", i)))
	}
	group = append(group, stage{name: "g/skip", do: func(context.Context) error { t.Error("a done stage ran again"); return nil }})
	groups := [][]stage{{mk("first")}, group, {mk("last")}}
	var events []progress.Event
	var evMu sync.Mutex
	prog := func(e progress.Event) { evMu.Lock(); events = append(events, e); evMu.Unlock() }
	if err := runStages(context.Background(), f, groups, 3, quiet, prog); err != nil {
		t.Fatal(err)
	}
	// The plan comes first: every stage, the jobs side by side.
	if len(events) == 0 || len(events[0].Plan) != 9 || events[0].Jobs != 3 || events[0].Plan[8].Stage != "last" {
		t.Fatalf("first event %+v, want the plan of 9 stages and 3 jobs", events[:min(1, len(events))])
	}
	events = events[1:]
	// Each stage starts once as an event, stage k of 9 in order of k; the
	// one done before is marked skipped. Each one run ends with an event
	// of its own k, after its start.
	var starts []progress.Event
	startK := map[string]int{}
	ends := 0
	for _, e := range events {
		if !e.Done {
			starts = append(starts, e)
			startK[e.Stage] = e.Index
			continue
		}
		ends++
		if k, ok := startK[e.Stage]; !ok || k != e.Index || e.Of != 9 {
			t.Errorf("end %+v: started as stage %d (%v)", e, k, ok)
		}
	}
	if len(starts) != 9 || ends != 8 {
		t.Fatalf("%d starts and %d ends, want 9 and 8: %+v", len(starts), ends, events)
	}
	for i, e := range starts {
		if e.Index != i+1 || e.Of != 9 || e.Skipped != (e.Stage == "g/skip") {
			t.Errorf("event %d: %+v", i, e)
		}
	}
	want := []string{"first", "g/0", "g/1", "g/2", "g/3", "g/4", "g/5", "last"}
	got := append([]string(nil), started...)
	if len(got) == len(want) {
		slices.Sort(got[1 : len(got)-1]) // the group's starts race
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("started %v, want %v", started, want)
	}
	if m := maxRun.Load(); m < 2 || m > 3 {
		t.Errorf("at most %d stages ran at once, want 2 or 3 (jobs 3)", m)
	}
	for _, s := range want {
		if !f.Done(s) {
			t.Errorf("stage %s not marked done", s)
		}
	}
	// Each stage run, and only those, is in the stage profile, with at
	// least the 5 ms it slept.
	var prof []StageTime
	if err := f.ReadJSON(profileFile, &prof); err != nil {
		t.Fatal(err)
	}
	var profiled []string
	for _, p := range prof {
		profiled = append(profiled, p.Stage)
		if p.WallS < 0.005 {
			t.Errorf("stage %s: %g s wall, want at least 0.005", p.Stage, p.WallS)
		}
	}
	slices.Sort(profiled)
	wantProfiled := slices.Sorted(slices.Values(want))
	if fmt.Sprint(profiled) != fmt.Sprint(wantProfiled) {
		t.Errorf("profiled %v, want %v", profiled, wantProfiled)
	}
}

// A stage that fails stops the others of its group: they see their
// context cancelled, are not marked done, and the failure is what
// runStages returns; no later group starts.
func TestRunStagesStopsAGroupOnAFailure(t *testing.T) {
	f, err := runfolder.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	boom := errors.New("boom")
	waiting := make(chan struct{})
	groups := [][]stage{{
		{name: "slow", do: func(ctx context.Context) error {
			close(waiting)
			<-ctx.Done() // an RL stage checkpoints here and returns
			return ctx.Err()
		}},
		{name: "fails", do: func(context.Context) error { <-waiting; return boom }},
		{name: "never", do: func(context.Context) error { t.Error("a stage started after its group failed"); return nil }},
	}, {{name: "later", do: func(context.Context) error { t.Error("the next group started after a failure"); return nil }}}}
	err = runStages(context.Background(), f, groups, 2, quiet, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("runStages = %v, want the failing stage's error", err)
	}
	for _, s := range []string{"slow", "fails", "never", "later"} {
		if _, err := os.Stat(filepath.Join(f.Dir, "stages", s)); err == nil {
			t.Errorf("stage %s marked done", s)
		}
	}
}

// A run stopped from outside between two stages says so, runs no stage
// after the stop and marks none done, one job or two: it does not go on
// to a report of stages that never ran.
func TestRunStagesStoppedBetweenStages(t *testing.T) {
	for _, jobs := range []int{1, 2} {
		f, err := runfolder.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		after := func(context.Context) error { t.Errorf("jobs %d: a stage ran after the stop", jobs); return nil }
		// Neither stage looks at ctx: the stop is runStages' to see.
		groups := [][]stage{
			{{name: "stop", do: func(context.Context) error { cancel(); return nil }}, {name: "sibling", do: func(context.Context) error { time.Sleep(20 * time.Millisecond); return nil }}, {name: "third", do: after}},
			{{name: "next", do: after}},
		}
		if err := runStages(ctx, f, groups, jobs, quiet, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("jobs %d: %v, want context.Canceled", jobs, err)
		}
		for _, s := range []string{"third", "next"} {
			if f.Done(s) {
				t.Errorf("jobs %d: %s marked done", jobs, s)
			}
		}
		f.Close()
	}
}
