package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	progressevent "github.com/calibrl/calibrl/progress"
)

// lastFrame is what a terminal shows after out: the lines below the last
// "erase the live lines" sequence, and the finished lines above it.
func lastFrame(out string) []string {
	if i := strings.LastIndex(out, "\x1b[J"); i >= 0 {
		out = out[i+len("\x1b[J"):]
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// On a terminal the board is redrawn in place: two stages side by side
// each keep their own figures on their own line (8f05f75's bar showed the
// step of the first under the name of the second), a finished stage's
// bar ends full, and the run's last line says it finished.
func TestLiveBoardRedrawsInPlace(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	b := newLiveBoard(&buf, progressevent.NewBoard(func() time.Time { return now }), func() int { return 100 })
	b.render(progressevent.Event{Stage: "collect", Index: 1, Of: 3, Skipped: true})
	b.render(progressevent.Event{Stage: "naive/seed-0", Index: 2, Of: 3})
	b.render(progressevent.Event{Stage: "naive/seed-0", Steps: 4})
	b.render(progressevent.Event{Stage: "static/seed-0", Index: 3, Of: 3})
	now = now.Add(time.Minute)
	b.render(progressevent.Event{Stage: "naive/seed-0", Step: 4, Unit: "iter", Figures: []progressevent.Figure{{Name: "reward", Value: 0.625}}})
	frame := lastFrame(buf.String())
	want := []string{
		"[2/3] naive/seed-0  [####################] 100%  iter 4/4  reward 0.625  · 1m00s, 0s left",
		"[3/3] static/seed-0  · 1m00s",
		"stages 1 of 3 done, 2 running · 1m00s · ETA after the first stage",
	}
	if strings.Join(frame, "\n") != strings.Join(want, "\n") {
		t.Errorf("frame:\n%s\nwant:\n%s", strings.Join(frame, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(buf.String(), "[1/3] collect  done before\n") {
		t.Errorf("no line for the stage done before:\n%q", buf.String())
	}
	b.render(progressevent.Event{Stage: "naive/seed-0", Index: 2, Of: 3, Done: true})
	b.render(progressevent.Event{Stage: "static/seed-0", Index: 3, Of: 3, Done: true})
	b.finish()
	out := buf.String()
	for _, l := range []string{"[2/3] naive/seed-0  done in 1m00s  iter 4  reward 0.625\n", "[3/3] static/seed-0  done in 1m00s\n"} {
		if !strings.Contains(out, l) {
			t.Errorf("no finished line %q:\n%q", l, out)
		}
	}
	if got := lastFrame(out); len(got) != 1 || got[0] != "stages 3 of 3 done · 1m00s · finished" {
		t.Errorf("last lines %q", got)
	}
	// Each redraw first goes up over exactly the live lines it drew.
	if !strings.Contains(out, "\x1b[3F\x1b[J") {
		t.Errorf("no redraw over three live lines:\n%q", out)
	}
}
