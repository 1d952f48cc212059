package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	progressevent "github.com/calibrl/calibrl/progress"
	"github.com/calibrl/calibrl/train"
)

// Long work in stages (reproduce) emits progress events (package
// progress): each stage as it starts, stage k of n, and the training
// figures inside it. stageBar renders them on a terminal as a bar over the
// stages with the current stage, its latest figures and an ETA from the
// stages run so far; there the run's info lines give way to the bar, and
// warnings and errors still pass through. Without a terminal nothing is
// drawn: the run's own log lines say "stage k of n".

type stageBar struct {
	mu      sync.Mutex
	w       io.Writer
	n, k    int
	ran     int // stages run (not skipped) in this process
	started time.Time
	stageAt time.Time
	stage   string
	bar     *progressbar.ProgressBar
	now     func() time.Time
}

// newStageProgress returns the logger and the progress sink for a run in
// stages, and done, which clears the bar.
func newStageProgress() (log *slog.Logger, prog progressevent.Func, done func()) {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return slog.Default(), nil, func() {}
	}
	b := &stageBar{w: os.Stderr, now: time.Now}
	return slog.New(&barHandler{inner: slog.Default().Handler(), bar: b}), b.render, b.finish
}

// render draws event e.
func (b *stageBar) render(e progressevent.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started.IsZero() {
		b.started = b.now()
	}
	if e.Index > 0 {
		if b.stage != "" && !b.stageAt.IsZero() {
			b.ran++
		}
		b.n, b.k, b.stage, b.stageAt = e.Of, e.Index, e.Stage, time.Time{}
		if !e.Skipped {
			b.stageAt = b.now()
		}
		b.draw(e.Skipped, "")
		return
	}
	if b.k == 0 {
		return
	}
	var d strings.Builder
	if e.Step > 0 {
		fmt.Fprintf(&d, " step %d", e.Step)
	}
	for _, f := range e.Figures {
		fmt.Fprintf(&d, " %s %.3g", f.Name, f.Value)
	}
	b.draw(false, d.String())
}

// draw shows the bar: stage k of n, its name, the detail and the ETA.
func (b *stageBar) draw(skipped bool, detail string) {
	if b.bar == nil {
		b.bar = progressbar.NewOptions(max(b.n, 1), progressbar.OptionSetWriter(b.w),
			progressbar.OptionShowCount(), progressbar.OptionSetWidth(24), progressbar.OptionSetPredictTime(false), progressbar.OptionClearOnFinish())
	}
	eta := ""
	if b.ran > 0 {
		per := b.now().Sub(b.started) / time.Duration(b.ran)
		eta = " · ETA " + (per * time.Duration(b.n-b.k+1)).Round(time.Second).String()
	}
	state := ""
	if skipped {
		state = " (done before)"
	}
	b.bar.Describe(fmt.Sprintf("stage %d of %d %s%s%s%s", b.k, b.n, b.stage, state, detail, eta))
	b.bar.Set(b.k - 1)
}

func (b *stageBar) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		b.bar.Finish()
	}
}

// barHandler passes warnings and errors to inner, clearing the bar first,
// and drops the info lines the bar stands for.
type barHandler struct {
	inner slog.Handler
	bar   *stageBar
}

func (h *barHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.inner.Enabled(ctx, l)
}

func (h *barHandler) Handle(ctx context.Context, r slog.Record) error {
	h.bar.mu.Lock()
	if h.bar.bar != nil {
		h.bar.bar.Clear()
	}
	h.bar.mu.Unlock()
	return h.inner.Handle(ctx, r)
}

func (h *barHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &barHandler{inner: h.inner.WithAttrs(as), bar: h.bar}
}

func (h *barHandler) WithGroup(name string) slog.Handler {
	return &barHandler{inner: h.inner.WithGroup(name), bar: h.bar}
}

// rlBar is train-policy's iteration bar on a terminal: iteration k of n
// with the ETA, the batch reward and the monitor's rewards in the
// description; nil without a terminal (the log lines are written instead).
func rlBar(label string, total int) func(map[string]any) {
	if total <= 0 || !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionSetDescription(label+" iteration"),
		progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
	var reward, trainUser, human string
	return func(rec map[string]any) {
		if v, ok := rec[train.MetricMonitorTrainReward].(float64); ok {
			trainUser, human = fmt.Sprintf(" · monitor: train user %.2f", v), ""
			if h, ok := rec[train.MetricMonitorHumanReward].(float64); ok {
				human = fmt.Sprintf(", human %.2f", h)
			}
		}
		v, ok := rec[train.MetricReward].(float64)
		if !ok {
			return
		}
		reward = fmt.Sprintf(" · reward %.2f", v)
		bar.Describe(label + " iteration" + reward + trainUser + human)
		if step, ok := rec[train.MetricStep].(int); ok {
			bar.Set(step)
		}
		if rec[train.MetricStep] == total {
			bar.Finish()
		}
	}
}
