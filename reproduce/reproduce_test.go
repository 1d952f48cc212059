package reproduce

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/preset"
)

// cancelAt is a slog handler that cancels a run when a stage logs its
// first training iteration: mid-stage, after a checkpoint of iteration 0.
type cancelAt struct {
	slog.Handler
	stage  string
	cancel context.CancelFunc
}

func (h cancelAt) Enabled(context.Context, slog.Level) bool { return true }

func (h cancelAt) Handle(ctx context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if r.Message == h.stage && a.Key == "iter" && a.Value.String() == "1" {
			h.cancel()
		}
		return true
	})
	return nil
}

// A run interrupted in the middle of a training stage and started again
// ends with the same summary as a run that was never interrupted.
func TestInterruptedRunResumesToTheSameSummary(t *testing.T) {
	p, err := preset.Get("tiny")
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	cfg := Config{Task: "mathchat", Preset: p, Seed: 3, Log: quiet}

	whole := cfg
	whole.Out = filepath.Join(t.TempDir(), "whole")
	want, err := Run(context.Background(), whole)
	if err != nil {
		t.Fatal(err)
	}

	cut := cfg
	cut.Out = filepath.Join(t.TempDir(), "cut")
	ctx, cancel := context.WithCancel(context.Background())
	cut.Log = slog.New(cancelAt{Handler: quiet.Handler(), stage: ArmNaive, cancel: cancel})
	if _, err := Run(ctx, cut); err == nil {
		t.Fatal("interrupted run: want an error")
	}
	for _, done := range []string{"collect", "tokenizer", "base", "sim", ArmStatic} {
		if _, err := os.Stat(filepath.Join(cut.Out, "stages", done)); err != nil {
			t.Fatalf("stage %s not marked done before the interruption", done)
		}
	}
	if _, err := os.Stat(filepath.Join(cut.Out, "stages", ArmNaive)); err == nil {
		t.Fatal("the interrupted stage is marked done")
	}
	cut.Log = quiet
	got, err := Run(context.Background(), cut)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed run's summary differs:\n got %+v\nwant %+v", got, want)
	}
}
