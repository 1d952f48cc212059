package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/task/level"
)

// episodeFlags are the flags every command that plays episodes shares.
type episodeFlags struct {
	task     string
	data     string
	user     string
	n        int
	seed     uint64
	split    string
	maxTurns int
	workers  int
	// dataPath is --data as given, an input no output may be.
	dataPath string
}

func (f *episodeFlags) register(cmd *cobra.Command, defaultSplit string) {
	fl := cmd.Flags()
	fl.StringVar(&f.task, "task", "mathchat", "task family: "+joinNames(task.Names()))
	addDataFlag(fl, &f.data)
	fl.StringVar(&f.user, "user", dialog.Human.String(), "who plays the user: human (the held-out proxy of a real person), naive (a prompted-style simulator), learned:DIR (a calibrated simulator), learned-nocontext:DIR, learned+copy:DIR (one that states only what the problem holds: numbers, support's whole values) or remote:MODEL")
	fl.IntVarP(&f.n, "episodes", "n", 200, "number of episodes (instances) to play")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of every episode's randomness; same seed and flags give the same episodes")
	fl.StringVar(&f.split, "split", defaultSplit, "instance split: train or test (test personas and problems never appear in train)")
	fl.IntVar(&f.maxTurns, "max-turns", 0, "turn limit per episode (agent turns; default the task level's: N at hN, else "+strconv.Itoa(level.DefaultMaxTurns)+")")
	fl.IntVar(&f.workers, "workers", 0, "concurrent episodes (0: one per CPU); results do not depend on it")
}

func (f *episodeFlags) validate() error {
	if f.n <= 0 {
		return fmt.Errorf("-n must be positive, got %d", f.n)
	}
	if f.maxTurns < 0 {
		return fmt.Errorf("--max-turns must be positive, got %d", f.maxTurns)
	}
	if f.workers < 0 {
		return fmt.Errorf("--workers must not be negative (0 means one per CPU), got %d", f.workers)
	}
	if f.data != "" {
		f.dataPath = f.data // resolveData empties it
	}
	if err := resolveData(&f.task, &f.data); err != nil {
		return err
	}
	if f.maxTurns == 0 {
		n, err := task.ParseName(f.task)
		if err != nil {
			return err
		}
		f.maxTurns = n.MaxTurns()
	}
	return task.CheckSplit(f.split)
}

func joinNames(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// input is a path a command reads, by the flag that named it.
type input struct{ flag, path string }

// refuseInputs refuses an output path that is one of the command's inputs
// (the same file or folder once symlinks, hard links and ".." are
// resolved): the output is written over the input, which is then lost
// (export --logs X --out X). Nothing has been written when it refuses.
// Inputs not given ("") and paths that do not exist yet are no conflict.
func refuseInputs(out string, inputs ...input) error {
	ost, err := os.Stat(out)
	if err != nil {
		return nil // nothing there to overwrite: not an input that exists
	}
	for _, in := range inputs {
		if in.path == "" {
			continue
		}
		if ist, err := os.Stat(in.path); err == nil && os.SameFile(ost, ist) {
			return fmt.Errorf("output %s is the --%s input itself: writing it would destroy what is read; choose another path", out, in.flag)
		}
	}
	return nil
}

// checkWritable fails early, before long work, when path cannot be
// written, or is one of inputs (refuseInputs).
func checkWritable(path string, inputs ...input) error {
	if path == "" {
		return fmt.Errorf("no output path")
	}
	if err := refuseInputs(path, inputs...); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".calibrl-probe-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	f.Close()
	os.Remove(f.Name())
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("cannot write %s: it is a folder", path)
	}
	return nil
}
