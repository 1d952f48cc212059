package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	progressevent "github.com/calibrl/calibrl/progress"
)

// The bar renders the typed events: stage k of n, a skipped stage, the
// step's figures, and an ETA once a stage has run.
func TestStageBarRendersEvents(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	b := &stageBar{w: &buf, now: func() time.Time { return clock }}
	b.render(progressevent.Event{Stage: "collect", Index: 1, Of: 3, Skipped: true})
	b.render(progressevent.Event{Stage: "base", Index: 2, Of: 3})
	b.render(progressevent.Event{Stage: "base", Step: 10, Figures: []progressevent.Figure{{Name: "val_nll", Value: 1.5}}})
	clock = clock.Add(time.Minute)
	b.render(progressevent.Event{Stage: "sim", Index: 3, Of: 3})
	b.finish()
	out := buf.String()
	for _, want := range []string{"stage 1 of 3 collect (done before)", "stage 2 of 3 base step 10 val_nll 1.5", "stage 3 of 3 sim · ETA 1m0s"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar lacks %q:\n%q", want, out)
		}
	}
}
