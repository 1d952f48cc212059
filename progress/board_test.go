package progress

import (
	"strings"
	"testing"
	"time"
)

// clock is a settable time for a board.
type clock struct{ t time.Time }

func (c *clock) now() time.Time           { return c.t }
func (c *clock) add(d time.Duration)      { c.t = c.t.Add(d) }
func newTestBoard() (*Board, *clock)      { c := &clock{time.Unix(0, 0)}; return NewBoard(c.now), c }
func start(name string, k, of int) Event  { return Event{Stage: name, Index: k, Of: of} }
func finish(name string, k, of int) Event { return Event{Stage: name, Index: k, Of: of, Done: true} }

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The terminal's lines, golden: one line per running stage with its own
// bar, step, figures, time in it and time left at its measured rate; a
// finished stage's line once; the footer's ETA from the stages finished
// per second, the running ones counted by their share of steps; the bar
// full at a stage's end.
func TestBoardLiveLines(t *testing.T) {
	b, c := newTestBoard()
	if fin := b.Update(Event{Stage: "collect", Index: 1, Of: 4, Skipped: true}); len(fin) != 1 || fin[0] != "[1/4] collect  done before" {
		t.Errorf("skipped stage: %q", fin)
	}
	b.Update(start("base", 2, 4))
	equalLines(t, "a stage without steps yet", b.Live(0), []string{
		"[2/4] base  · 0s",
		"stages 1 of 4 done, 1 running · 0s · ETA after the first stage",
	})
	b.Update(Event{Stage: "base", Steps: 200})
	c.add(30 * time.Second)
	b.Update(Event{Stage: "base", Step: 50, Figures: []Figure{{"val_nll", 2.0794415416798357}}})
	equalLines(t, "a quarter of the steps", b.Live(0), []string{
		"[2/4] base  [#####---------------]  25%  step 50/200  val_nll 2.079  · 30s, 1m30s left",
		"stages 1 of 4 done, 1 running · 30s · ETA after the first stage",
	})
	c.add(90 * time.Second)
	b.Update(Event{Stage: "base", Step: 200, Figures: []Figure{{"val_nll", 1.23456}}})
	equalLines(t, "the last step: the bar full", b.Live(0)[:1], []string{
		"[2/4] base  [####################] 100%  step 200/200  val_nll 1.235  · 2m00s, 0s left",
	})
	fin := b.Update(finish("base", 2, 4))
	equalLines(t, "the finished line", fin, []string{"[2/4] base  done in 2m00s  step 200  val_nll 1.235"})
	b.Update(start("naive/seed-0", 3, 4))
	b.Update(Event{Stage: "naive/seed-0", Steps: 10})
	c.add(20 * time.Second)
	b.Update(Event{Stage: "naive/seed-0", Step: 5, Unit: "iter", Figures: []Figure{{"reward", 0.4375}, {"human", 0.123456789}}})
	// One stage in 140 s plus half of one: 1.5 stages per 140 s; 1.5 left.
	equalLines(t, "an RL stage half way", b.Live(0), []string{
		"[3/4] naive/seed-0  [##########----------]  50%  iter 5/10  reward 0.4375  human 0.1235  · 20s, 20s left",
		"stages 2 of 4 done, 1 running · 2m20s · ETA ~2m20s",
	})
	equalLines(t, "cut to the width", b.Live(24), []string{"[3/4] naive/seed-0  [##…", "stages 2 of 4 done, 1 r…"})
	b.Update(finish("naive/seed-0", 3, 4))
	b.Update(start("report", 4, 4))
	b.Update(finish("report", 4, 4))
	if got, want := b.Final(), "stages 4 of 4 done · 2m20s · finished"; got != want {
		t.Errorf("final line %q, want %q", got, want)
	}
}

// Two stages side by side: each one's steps and figures stay on its own
// line, whichever started last (the bar used to show the figures of one
// stage under the name of the other).
func TestBoardKeepsEachStagesFigures(t *testing.T) {
	b, c := newTestBoard()
	b.Update(start("naive/seed-0", 1, 2))
	b.Update(start("static/seed-0", 2, 2))
	c.add(10 * time.Second)
	b.Update(Event{Stage: "naive/seed-0", Step: 3, Unit: "iter", Figures: []Figure{{"reward", 0.25}}})
	b.Update(Event{Stage: "static/seed-0", Step: 7, Unit: "iter", Figures: []Figure{{"reward", 0.75}}})
	b.Update(Event{Stage: "naive/seed-0", Step: 4, Unit: "iter", Figures: []Figure{{"reward", 0.5}}})
	equalLines(t, "side by side", b.Live(0), []string{
		"[1/2] naive/seed-0  iter 4  reward 0.5  · 10s",
		"[2/2] static/seed-0  iter 7  reward 0.75  · 10s",
		"stages 0 of 2 done, 2 running · 10s · ETA after the first stage",
	})
	fin := b.Update(finish("static/seed-0", 2, 2))
	equalLines(t, "the one finished first", fin, []string{"[2/2] static/seed-0  done in 10s  iter 7  reward 0.75"})
}

// The plain lines for a file: a stage's start and end always, its steps
// at most every PlainEvery, four significant digits, no "<nil>".
func TestBoardPlainLines(t *testing.T) {
	b, c := newTestBoard()
	b.PlainEvery = time.Minute
	var got []string
	emit := func(e Event) {
		if l := b.Plain(e); l != "" {
			got = append(got, l)
		}
	}
	emit(start("base", 1, 2))
	emit(Event{Stage: "base", Steps: 100})
	c.add(10 * time.Second)
	emit(Event{Stage: "base", Step: 10, Figures: []Figure{{"val_nll", 3.14159265358979}}})
	c.add(10 * time.Second)
	emit(Event{Stage: "base", Step: 20, Figures: []Figure{{"val_nll", 2.5}}}) // within a minute of the last: no line
	c.add(60 * time.Second)
	emit(Event{Stage: "base", Step: 80, Figures: []Figure{{"val_nll", 1.0000001}}})
	emit(finish("base", 1, 2))
	emit(start("report", 2, 2))
	emit(finish("report", 2, 2))
	equalLines(t, "plain lines", got, []string{
		"[1/2] base  started",
		"[1/2] base  10%  step 10/100  val_nll 3.142  · 10s, 1m30s left · stages 0 of 2 done, 1 running · 10s · ETA after the first stage",
		"[1/2] base  80%  step 80/100  val_nll 1  · 1m20s, 20s left · stages 0 of 2 done, 1 running · 1m20s · ETA after the first stage",
		"[1/2] base  done in 1m20s  step 80  val_nll 1 · stages 1 of 2 done · 1m20s · ETA ~1m20s",
		"[2/2] report  started",
		"[2/2] report  done in 0s · stages 2 of 2 done · 1m20s · finished",
	})
}

func TestNum(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {1, "1"}, {0.4375, "0.4375"}, {2.0794415416798357, "2.079"}, {-0.123456, "-0.1235"},
		{12345.678, "12350"}, {999.96, "1000"}, {0.000123456, "0.0001235"}, {1.5e-7, "1.5e-07"}, {3e20, "3e+20"},
	} {
		if got := Num(c.v); got != c.want {
			t.Errorf("Num(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{0, "0s"}, {1499 * time.Millisecond, "1s"}, {65 * time.Second, "1m05s"}, {3725 * time.Second, "1h02m"}} {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// With a plan the run's ETA adds every stage's estimate, corrected by the
// rate measured on its kind: before anything finishes by the running
// stage's own steps per second, after by the finished stages of each
// kind (a kind not finished yet by all of them). Stages counted as equal
// read "ETA ~6h31m" during the SFT of a 39-minute run.
func TestBoardETAFromThePlan(t *testing.T) {
	b, c := newTestBoard()
	b.Update(Event{Jobs: 1, Plan: []Planned{
		{Stage: "sft", Kind: "sft", Estimate: 100 * time.Second},
		{Stage: "rl-1", Kind: "rl", Estimate: 10 * time.Second},
		{Stage: "rl-2", Kind: "rl", Estimate: 10 * time.Second},
		{Stage: "eval", Kind: "eval", Estimate: 5 * time.Second},
	}})
	b.Update(start("sft", 1, 4))
	if got := b.Live(0)[1]; got != "stages 0 of 4 done, 1 running · 0s · ETA after the first step" {
		t.Errorf("before a step: %q", got)
	}
	b.Update(Event{Stage: "sft", Steps: 100})
	c.add(20 * time.Second)
	b.Update(Event{Stage: "sft", Step: 10})
	// SFT runs at twice its estimate (200 s for 100): 180 s of it left,
	// and the rest at twice theirs, 50 s.
	if got, want := b.Live(0)[1], "stages 0 of 4 done, 1 running · 20s · ETA ~3m50s"; got != want {
		t.Errorf("during the first stage: %q, want %q", got, want)
	}
	c.add(180 * time.Second)
	b.Update(finish("sft", 1, 4))
	b.Update(start("rl-1", 2, 4))
	c.add(30 * time.Second)
	b.Update(finish("rl-1", 2, 4))
	// rl took three times its estimate, so rl-2 takes 30 s; eval, a kind
	// not timed yet, 230/110 times its 5 s: 40 s in all.
	if got, want := b.Final(), "stages 2 of 4 done · 3m50s · ETA ~40s"; got != want {
		t.Errorf("after two stages: %q, want %q", got, want)
	}
	// Two jobs share the time, but no sooner than the running stage ends.
	b.Update(Event{Jobs: 2})
	b.Update(start("rl-2", 3, 4))
	if got, want := b.Live(0)[1], "stages 2 of 4 done, 1 running · 3m50s · ETA ~30s"; got != want {
		t.Errorf("two jobs: %q, want %q", got, want)
	}
	b.Update(Event{Stage: "rl-2", Steps: 10})
	c.add(5 * time.Second)
	b.Update(Event{Stage: "rl-2", Step: 5}) // at its own rate, 5 s left
	if got, want := b.Live(0)[1], "stages 2 of 4 done, 1 running · 3m55s · ETA ~8s"; got != want {
		t.Errorf("two jobs, rl-2 half way: %q, want %q", got, want)
	}
}
