package rollout

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/calibrl/calibrl/dialog"
)

func collectStream(t *testing.T, f func(emit func(dialog.Episode) error) error) []dialog.Episode {
	t.Helper()
	var out []dialog.Episode
	if err := f(func(ep dialog.Episode) error { out = append(out, ep); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// Streaming in chunks gives exactly the episodes of one Run or Share.
func TestStreamEqualsRun(t *testing.T) {
	cfg := Config{Split: "train", Start: 3, Instances: 2*StreamChunk + 17, Group: 2, Seed: 7, MaxTurns: 6}
	want := run(t, randomAgent{}, cfg)
	var last int
	cfg.Progress = func(done, total int) {
		if done < last || total != cfg.Instances*cfg.Group {
			t.Errorf("progress %d/%d after %d", done, total, last)
		}
		last = done
	}
	got := collectStream(t, func(emit func(dialog.Episode) error) error {
		return Stream(context.Background(), guessTask{}, randomAgent{}, guessUser{}, cfg, emit)
	})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("streamed %d episodes differ from Run's %d", len(got), len(want))
	}
	if last != cfg.Instances*cfg.Group {
		t.Errorf("progress ended at %d", last)
	}

	agents, names := []dialog.Agent{randomAgent{}, &batchAgent{}}, []string{"a", "b"}
	scfg := Config{Split: "train", Instances: StreamChunk + 5, Seed: 2, MaxTurns: 4}
	shared, err := Share(context.Background(), guessTask{}, agents, names, guessUser{}, scfg)
	if err != nil {
		t.Fatal(err)
	}
	streamed := collectStream(t, func(emit func(dialog.Episode) error) error {
		return ShareStream(context.Background(), guessTask{}, agents, names, guessUser{}, scfg, emit)
	})
	if !reflect.DeepEqual(shared, streamed) {
		t.Fatal("ShareStream differs from Share")
	}
}

// A cancelled stream stops within a chunk, however many episodes were
// asked for, and memory does not grow with the count: nothing is played
// ahead of emit.
func TestStreamStopsPromptly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cfg := Config{Split: "train", Instances: 2_000_000_000, Seed: 1, MaxTurns: 4}
	n := 0
	start := time.Now()
	err := Stream(ctx, guessTask{}, randomAgent{}, guessUser{}, cfg, func(dialog.Episode) error {
		if n++; n == 3*StreamChunk {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if n != 3*StreamChunk || time.Since(start) > 10*time.Second {
		t.Errorf("emitted %d episodes in %v after the cancel at %d", n, time.Since(start), 3*StreamChunk)
	}
	boom := errors.New("disk full")
	if err := Stream(context.Background(), guessTask{}, randomAgent{}, guessUser{}, cfg, func(dialog.Episode) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("emit's error: got %v", err)
	}
}
