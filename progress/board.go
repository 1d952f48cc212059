package progress

// Board turns the events of a run in stages into lines a person reads:
// on a terminal, one live line per running stage (its own bar, step,
// figures and time left) under the lines of the stages already finished,
// and a footer with the run's ETA; in a file, plain lines at a stage's end
// and now and then inside it. Every time left comes from rates measured
// in this process: a stage's from its steps per second so far; the run's,
// when the work sent its plan (Event.Plan), from each planned stage's
// estimate corrected by how long the finished stages of its kind took
// against theirs (a kind none of whose stages has finished yet takes the
// correction of all finished stages, or before any, of the running
// stages' own rates), else from the stages finished per second so far.
// Numbers are printed with four significant digits (Num).

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// barWidth is the cells of a stage's bar.
const barWidth = 20

// Board holds where a run in stages stands. Its methods are safe for
// concurrent use.
type Board struct {
	mu      sync.Mutex
	now     func() time.Time
	started time.Time // the first event
	of      int       // stages in the run
	done    int       // stages finished or found done before
	ran     int       // stages finished in this process
	running []*stageState
	// plan is each planned stage by name, planOrder their names in the
	// order planned (the ETA sums in that order, so that one board's
	// figures never depend on map order); finished the stages done or
	// found done before; jobs how many run side by side.
	plan      map[string]Planned
	planOrder []string
	finished  map[string]bool
	jobs      int
	// took and estimated add up, per kind, the wall time of the planned
	// stages finished in this process and their estimates.
	took, estimated map[string]time.Duration
	// plainAt is when Plain last wrote a step line of each stage.
	plainAt map[string]time.Time
	// PlainEvery is the least time between two plain step lines of one
	// stage (a stage's start and end are always written).
	PlainEvery time.Duration
}

type stageState struct {
	name        string
	index       int
	started     time.Time
	step, steps int
	figures     []Figure
	unit        string // "step" or "iter"
}

// NewBoard returns an empty board reading the time from now (time.Now
// when nil).
func NewBoard(now func() time.Time) *Board {
	if now == nil {
		now = time.Now
	}
	return &Board{now: now, plainAt: map[string]time.Time{}, PlainEvery: 30 * time.Second,
		plan: map[string]Planned{}, finished: map[string]bool{}, took: map[string]time.Duration{}, estimated: map[string]time.Duration{}}
}

// Update files e and returns the lines of the stages it finished (to be
// printed once, above the live lines).
func (b *Board) Update(e Event) (finished []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.update(e)
}

func (b *Board) update(e Event) []string {
	now := b.now()
	if b.started.IsZero() {
		b.started = now
	}
	if e.Of > 0 {
		b.of = e.Of
	}
	for _, p := range e.Plan {
		if _, ok := b.plan[p.Stage]; !ok {
			b.planOrder = append(b.planOrder, p.Stage)
		}
		b.plan[p.Stage] = p
	}
	if e.Jobs > 0 {
		b.jobs = e.Jobs
	}
	switch {
	case e.Index > 0 && e.Skipped:
		b.finished[e.Stage] = true
		b.done++
		return []string{fmt.Sprintf("%s %s  done before", b.label(e.Index), e.Stage)}
	case e.Index > 0 && e.Done:
		i := b.find(e.Stage)
		b.finished[e.Stage] = true
		b.done++
		b.ran++
		if i < 0 {
			return []string{fmt.Sprintf("%s %s  done", b.label(e.Index), e.Stage)}
		}
		s := b.running[i]
		b.running = slices.Delete(b.running, i, i+1)
		if p, ok := b.plan[s.name]; ok && p.Estimate > 0 {
			b.took[p.Kind] += now.Sub(s.started)
			b.estimated[p.Kind] += p.Estimate
		}
		line := fmt.Sprintf("%s %s  done in %s", b.label(s.index), s.name, Duration(now.Sub(s.started)))
		if s.step > 0 {
			line += fmt.Sprintf("  %s %d", s.unit, s.step)
		}
		return []string{line + figures(s.figures)}
	case e.Index > 0:
		b.running = append(b.running, &stageState{name: e.Stage, index: e.Index, started: now, unit: "step"})
		slices.SortFunc(b.running, func(x, y *stageState) int { return x.index - y.index })
		return nil
	}
	i := b.find(e.Stage)
	if i < 0 {
		return nil // a step of a stage not started on this board
	}
	s := b.running[i]
	if e.Step > 0 {
		s.step = e.Step
	}
	if e.Steps > 0 {
		s.steps = e.Steps
	}
	if e.Unit != "" {
		s.unit = e.Unit
	}
	if len(e.Figures) > 0 {
		s.figures = mergeFigures(s.figures, e.Figures)
	}
	return nil
}

// mergeFigures keeps the latest value of each figure, in the order they
// first came.
func mergeFigures(have, in []Figure) []Figure {
	for _, f := range in {
		if i := slices.IndexFunc(have, func(h Figure) bool { return h.Name == f.Name }); i >= 0 {
			have[i] = f
		} else {
			have = append(have, f)
		}
	}
	return have
}

func (b *Board) find(name string) int {
	return slices.IndexFunc(b.running, func(s *stageState) bool { return s.name == name })
}

// label is "[ k/n]", k right-aligned to n's width.
func (b *Board) label(k int) string {
	w := len(strconv.Itoa(b.of))
	return fmt.Sprintf("[%*d/%d]", w, k, b.of)
}

// Live returns the live lines: one per running stage, then the footer,
// each cut to width runes (no cut when width <= 0).
func (b *Board) Live(width int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	var lines []string
	for _, s := range b.running {
		lines = append(lines, cut(b.stageLine(s, now, true), width))
	}
	if b.of > 0 {
		lines = append(lines, cut(b.footer(now), width))
	}
	return lines
}

// Final is the footer once the run is over.
func (b *Board) Final() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.footer(b.now())
}

// stageLine is one running stage: label, name, bar (when its steps are
// known), step, figures, time in the stage and time left.
func (b *Board) stageLine(s *stageState, now time.Time, bar bool) string {
	var l strings.Builder
	fmt.Fprintf(&l, "%s %s", b.label(s.index), s.name)
	in := now.Sub(s.started)
	if s.steps > 0 {
		frac := min(1, float64(s.step)/float64(s.steps))
		if bar {
			fill := int(math.Round(frac * barWidth))
			fmt.Fprintf(&l, "  [%s%s]", strings.Repeat("#", fill), strings.Repeat("-", barWidth-fill))
		}
		fmt.Fprintf(&l, " %3.0f%%  %s %d/%d", 100*frac, s.unit, s.step, s.steps)
	} else if s.step > 0 {
		fmt.Fprintf(&l, "  %s %d", s.unit, s.step)
	}
	l.WriteString(figures(s.figures))
	fmt.Fprintf(&l, "  · %s", Duration(in))
	if left, ok := stageLeft(s, in); ok {
		fmt.Fprintf(&l, ", %s left", Duration(left))
	}
	return l.String()
}

// stageLeft is a stage's time left at its rate so far (steps per second
// since it started, setup included).
func stageLeft(s *stageState, in time.Duration) (time.Duration, bool) {
	if s.steps <= 0 || s.step <= 0 || in <= 0 {
		return 0, false
	}
	perStep := float64(in) / float64(s.step)
	return time.Duration(perStep * float64(max(0, s.steps-s.step))), true
}

// footer is the run's line: stages done of all, running, time so far and
// the ETA: from the plan when there is one (planLeft), else from the
// stages finished per second, the running ones counted by the share of
// their steps made.
func (b *Board) footer(now time.Time) string {
	elapsed := now.Sub(b.started)
	line := fmt.Sprintf("stages %d of %d done", b.done, b.of)
	if len(b.running) > 0 {
		line += fmt.Sprintf(", %d running", len(b.running))
	}
	line += " · " + Duration(elapsed)
	if b.done >= b.of {
		return line + " · finished"
	}
	if len(b.plan) > 0 {
		if left, ok := b.planLeft(now); ok {
			return line + " · ETA ~" + Duration(left)
		}
		return line + " · ETA after the first step"
	}
	partial := 0.0
	for _, s := range b.running {
		if s.steps > 0 {
			partial += min(1, float64(s.step)/float64(s.steps))
		}
	}
	if b.ran == 0 || elapsed <= 0 {
		return line + " · ETA after the first stage"
	}
	rate := (float64(b.ran) + partial) / elapsed.Seconds() // stages per second
	left := float64(b.of-b.done) - partial
	return line + " · ETA ~" + Duration(time.Duration(left/rate*float64(time.Second)))
}

// planLeft is the time left by the plan: every stage not started takes
// its estimate times its kind's correction, a running stage its time left
// at its own rate (or its corrected estimate less its time so far), and
// the stages share Jobs cores' worth of time; never less than the longest
// running stage's time left. False before anything was measured.
func (b *Board) planLeft(now time.Time) (time.Duration, bool) {
	var took, estimated time.Duration
	for k, d := range b.took {
		took += d
		estimated += b.estimated[k]
	}
	overall := 0.0
	if estimated > 0 {
		overall = took.Seconds() / estimated.Seconds()
	} else {
		// Nothing finished yet: the running stages' rates, each projected
		// to its last step, against their estimates.
		var projected, est float64
		for _, s := range b.running {
			p, ok := b.plan[s.name]
			if !ok || p.Estimate <= 0 || s.steps <= 0 || s.step <= 0 {
				continue
			}
			projected += now.Sub(s.started).Seconds() * float64(s.steps) / float64(s.step)
			est += p.Estimate.Seconds()
		}
		if est == 0 {
			return 0, false
		}
		overall = projected / est
	}
	correction := func(kind string) float64 {
		if e := b.estimated[kind]; e > 0 {
			return b.took[kind].Seconds() / e.Seconds()
		}
		return overall
	}
	var left, longest float64 // seconds
	for _, name := range b.planOrder {
		if p := b.plan[name]; !b.finished[name] && b.find(name) < 0 {
			left += p.Estimate.Seconds() * correction(p.Kind)
		}
	}
	for _, s := range b.running {
		in := now.Sub(s.started)
		l := 0.0
		if d, ok := stageLeft(s, in); ok {
			l = d.Seconds()
		} else if p, ok := b.plan[s.name]; ok {
			l = max(0, p.Estimate.Seconds()*correction(p.Kind)-in.Seconds())
		}
		left += l
		longest = max(longest, l)
	}
	return time.Duration(max(longest, left/float64(max(1, b.jobs))) * float64(time.Second)), true
}

// Plain returns the plain line for e, for a file or CI log: a stage's
// start and end, and its steps at most every PlainEvery; "" when e adds
// no line.
func (b *Board) Plain(e Event) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	var s *stageState
	if i := b.find(e.Stage); i >= 0 {
		s = b.running[i]
	}
	fin := b.update(e)
	switch {
	case len(fin) > 0:
		return fin[0] + " · " + b.footer(now)
	case e.Index > 0:
		return fmt.Sprintf("%s %s  started", b.label(e.Index), e.Stage)
	case s == nil, e.Step == 0 && len(e.Figures) == 0:
		return "" // not a stage of this board, or only its length
	}
	if at, ok := b.plainAt[s.name]; ok && now.Sub(at) < b.PlainEvery {
		return ""
	}
	b.plainAt[s.name] = now
	return b.stageLine(s, now, false) + " · " + b.footer(now)
}

// figures is "  name value" for each figure.
func figures(fs []Figure) string {
	var l strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&l, "  %s %s", f.Name, Num(f.Value))
	}
	return l.String()
}

// Num prints v with four significant digits, without an exponent from
// 0.0001 to below 10^15 ("0.4375", "1.235", "12350"), and with one
// outside that range.
func Num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	if a := math.Abs(r); a >= 1e4 && a < 1e15 {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// Round is v rounded to four significant digits, for a log line that
// keeps numbers as numbers.
func Round(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return r
}

// Duration prints d in whole seconds: "45s", "3m05s", "1h02m".
func Duration(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
}

// cut shortens line to width runes, marking the cut with "…".
func cut(line string, width int) string {
	if width <= 0 || utf8.RuneCountInString(line) <= width {
		return line
	}
	r := []rune(line)
	return string(r[:width-1]) + "…"
}
