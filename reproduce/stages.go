package reproduce

// The stages a run is made of and how they run: in groups, each group's
// stages side by side as --jobs allows, each marked done in the run folder
// so that a run started again resumes at the first stage not done.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"

	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/progress"
	"github.com/calibrl/calibrl/runfolder"
)

// reportStage marks the report written after every other stage.
const reportStage = "report"

type stage struct {
	name string
	do   func(context.Context) error
	cost cost // its kind and estimated wall time, for the ETA (estimate.go)
}

// runStages runs the stages not yet marked done in f, marking each and
// adding its wall and CPU time to f's stage profile (profile.go), group
// after group. The stages of one group are independent (none reads what
// another writes), so up to jobs of them run side by side, in order of
// the list, with the engine's workers (lm.SetWorkers) divided between
// the ones running: small models use two cores better as two jobs than
// as one job split in two (measured: one GRPO iteration of the quick
// preset's shape took 2.2 s alone on 2 cores and 3.4 s each for two side
// by side on one core each). Every result is the same in any order and
// with any worker count, so jobs changes only the wall time. A failed
// stage stops the others of its group (they checkpoint, as on an
// interruption) and its error is returned.
func runStages(ctx context.Context, f *runfolder.Folder, groups [][]stage, jobs int, log *slog.Logger, prog progress.Func) error {
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	// Stages are counted as they start, side by side ones in the order
	// they happen to start.
	var mu sync.Mutex
	k := 0
	if jobs <= 0 {
		jobs = DefaultJobs()
	}
	prog.Emit(progress.Event{Plan: plan(groups, ""), Jobs: jobs})
	prof := openProfile(f)
	start := func(name string, skipped bool) int {
		mu.Lock()
		defer mu.Unlock()
		k++
		msg := "reproduce: stage"
		if skipped {
			msg = "reproduce: stage already done"
		}
		log.Info(msg, "stage", name, "k", k, "of", n)
		prog.Emit(progress.Event{Stage: name, Index: k, Of: n, Skipped: skipped})
		if !skipped {
			prof.begin(name)
		}
		return k
	}
	end := func(name string, k int, err error) error {
		if err != nil {
			prof.drop(name)
			return err
		}
		if err := prof.end(name); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		prog.Emit(progress.Event{Stage: name, Index: k, Of: n, Done: true})
		return nil
	}
	for _, g := range groups {
		var todo []stage
		for _, s := range g {
			if f.Done(s.name) {
				start(s.name, true)
				continue
			}
			todo = append(todo, s)
		}
		if err := runGroup(ctx, f, todo, jobs, start, end); err != nil {
			return err
		}
	}
	return nil
}

// DefaultJobs is how many independent stages reproduce runs side by side
// unless told: two where there are two cores or more. Each holds its own
// models, KV caches and episodes: the quick mathchat run's RL,
// evaluation and gap stages peaked at 5.6 GB one at a time and 10.3 GB
// two at a time; the horizon study's gap stages at 1,024 tokens (H = 16)
// at 14.8 GB two at a time, mostly the simulator's KV caches.
func DefaultJobs() int { return min(2, runtime.GOMAXPROCS(0)) }

// runGroup runs independent stages, up to jobs at a time. A stage starts
// only while the run is wanted: stopped between stages, it returns the
// stop instead of letting the run go on to a report of stages that never
// ran.
func runGroup(ctx context.Context, f *runfolder.Folder, todo []stage, jobs int, start func(name string, skipped bool) int, end func(name string, k int, err error) error) error {
	runOne := func(ctx context.Context, s stage) error {
		k := start(s.name, false)
		err := s.do(ctx)
		if err != nil {
			err = fmt.Errorf("reproduce %s: %w", s.name, err)
		} else {
			err = f.MarkDone(s.name)
		}
		return end(s.name, k, err)
	}
	jobs = min(jobs, len(todo))
	if jobs <= 1 {
		for _, s := range todo {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := runOne(ctx, s); err != nil {
				return err
			}
		}
		return nil
	}
	procs := runtime.GOMAXPROCS(0)
	prev := lm.SetWorkers(max(1, procs/jobs))
	defer lm.SetWorkers(prev)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		next    int
		running int
		errs    = make([]error, len(todo))
		wg      sync.WaitGroup
	)
	// take hands out the next stage and re-divides the cores between the
	// stages running: a stage left alone at the group's end gets them all.
	take := func(finished bool) (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			running--
		}
		i, ok := next, next < len(todo) && ctx.Err() == nil
		if ok {
			next++
			running++
		}
		lm.SetWorkers(max(1, procs/max(1, running)))
		return i, ok
	}
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, ok := take(false); ok; i, ok = take(true) {
				if errs[i] = runOne(ctx, todo[i]); errs[i] != nil {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	// The first stage that failed by itself, not by the others' cancel.
	var first error
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		first = cmp.Or(first, err)
	}
	if first == nil && next < len(todo) {
		// Stopped from outside before every stage was handed out.
		return parent.Err()
	}
	return first
}
