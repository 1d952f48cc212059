package reproduce

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/runfolder"
)

// snapshotKill is a slog handler that stands in for a SIGKILL in the middle of
// a stage: when the stage logs iteration iter's record (after the
// checkpoint of iteration iter-1, before iter's own), it copies the
// stage's checkpoint as a killed run leaves it and cancels the run; the
// test then puts that copy back, with every record logged since in
// metrics.jsonl, as the disk is after a kill -9 at that moment.
type snapshotKill struct {
	slog.Handler
	stage, iter, last, snapshot string
	cancel                      context.CancelFunc
}

func (h *snapshotKill) Enabled(context.Context, slog.Level) bool { return true }

func (h *snapshotKill) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if r.Message == h.stage && a.Key == "iter" && a.Value.String() == h.iter && h.cancel != nil {
			if err := os.CopyFS(h.snapshot, os.DirFS(h.last)); err != nil {
				panic(err)
			}
			h.cancel()
			h.cancel = nil
		}
		return true
	})
	return nil
}

// recordKeys are a stage's metrics records, each as its step, event and
// keys (the values of timings differ from run to run), the resume events
// left out: what an uninterrupted run logs, in order.
func recordKeys(t *testing.T, dir string) map[string][]string {
	t.Helper()
	recs, err := (&runfolder.Folder{Dir: dir}).ReadMetrics()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, rec := range recs {
		if rec["event"] == "resume" {
			continue
		}
		var keys []string
		for k := range rec {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		stage, _ := rec["stage"].(string)
		out[stage] = append(out[stage], fmt.Sprintf("step %v %v %s", rec["step"], rec["event"], strings.Join(keys, ",")))
	}
	return out
}

// After a kill -9 mid-stage and a resume, metrics.jsonl holds each record
// once: the records of the iteration the killed run logged after its last
// checkpoint, which the resumed run redoes, are not repeated, and a
// resumed RL run logs its config no second time.
func TestKilledRunLogsEachRecordOnce(t *testing.T) {
	cfg := tinyConfig(t)
	wholeDir, _ := wholeRun(t)

	cut := cfg
	cut.Out = filepath.Join(t.TempDir(), "cut")
	stage := seedName(ArmNaive, 0)
	ckpt := filepath.Join(cut.Out, "checkpoints", stage)
	ctx, cancel := context.WithCancel(context.Background())
	h := &snapshotKill{Handler: quiet.Handler(), stage: stage, iter: "2", last: filepath.Join(ckpt, "last"),
		snapshot: filepath.Join(t.TempDir(), "last"), cancel: cancel}
	cut.Log = slog.New(h)
	if _, err := Run(ctx, cut); err == nil {
		t.Fatal("interrupted run: want an error")
	}
	if h.cancel != nil {
		t.Fatalf("%s never logged iteration %s", stage, h.iter)
	}
	// The disk as the kill left it: the checkpoint of iteration 1, the
	// stage not done, its final model not written.
	if err := os.RemoveAll(h.last); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(h.snapshot, h.last); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(ckpt, "grpo_result.json"))
	os.Remove(filepath.Join(cut.Out, "stages", stage))
	before := recordKeys(t, cut.Out)[stage]
	steps := 0
	for _, k := range before {
		if strings.HasPrefix(k, "step 2 ") {
			steps++
		}
	}
	if steps == 0 {
		t.Fatalf("the killed run logged no record of iteration 2: %q", before)
	}

	cut.Log = quiet
	if _, err := Run(context.Background(), cut); err != nil {
		t.Fatal(err)
	}
	got, want := recordKeys(t, cut.Out), recordKeys(t, wholeDir)
	for st, w := range want {
		if !slices.Equal(got[st], w) {
			t.Errorf("stage %s: metrics.jsonl after kill and resume holds\n%s\nwant, as the uninterrupted run's,\n%s", st, strings.Join(got[st], "\n"), strings.Join(w, "\n"))
		}
	}
	for st := range got {
		if _, ok := want[st]; !ok {
			t.Errorf("stage %s: only in the resumed run", st)
		}
	}
}
