package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/calibrl/calibrl/train"
)

// Long work in stages (reproduce) reports each stage as a log event
// ("reproduce: stage" or "reproduce: stage already done", attribute
// "stage", the logger carrying "stages", their number). stageHandler
// turns those events into "stage k of n": on a terminal a bar over the
// stages with the current stage, its latest training figure and an ETA
// from the stages run so far; otherwise plain log lines with "k" and "of"
// added. Warnings and errors always pass through.

// stageMessages are the events that start a stage.
var stageMessages = map[string]bool{"reproduce: stage": true, "reproduce: stage already done": true}

type stageState struct {
	mu      sync.Mutex
	n, k    int
	ran     int // stages run (not skipped) in this process
	started time.Time
	stageAt time.Time
	stage   string
	bar     *progressbar.ProgressBar
	now     func() time.Time
}

type stageHandler struct {
	inner    slog.Handler
	st       *stageState
	terminal bool
	attrs    []slog.Attr
}

// newStageLogger wraps the default logger's handler; done clears the bar.
func newStageLogger() (log *slog.Logger, done func()) {
	h := newStageHandler(slog.Default().Handler(), term.IsTerminal(int(os.Stderr.Fd())))
	return slog.New(h), func() {
		h.st.mu.Lock()
		defer h.st.mu.Unlock()
		if h.st.bar != nil {
			h.st.bar.Finish()
		}
	}
}

func newStageHandler(inner slog.Handler, terminal bool) *stageHandler {
	return &stageHandler{inner: inner, terminal: terminal, st: &stageState{now: time.Now}}
}

func (h *stageHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *stageHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(as)
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *stageHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.inner = h.inner.WithGroup(name)
	return &c
}

func (h *stageHandler) Handle(ctx context.Context, r slog.Record) error {
	attrs := map[string]slog.Value{}
	for _, a := range h.attrs {
		attrs[a.Key] = a.Value
	}
	r.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value
		return true
	})
	st := h.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.started.IsZero() {
		st.started = st.now()
	}
	if stageMessages[r.Message] {
		if v, ok := attrs["stages"]; ok {
			st.n = int(v.Int64())
		}
		if st.stage != "" && !st.stageAt.IsZero() {
			st.ran++
		}
		st.k++
		st.stage = attrs["stage"].String()
		st.stageAt = time.Time{}
		if r.Message == "reproduce: stage" {
			st.stageAt = st.now()
		}
		if !h.terminal {
			r = r.Clone()
			r.AddAttrs(slog.Int("k", st.k), slog.Int("of", st.n))
			return h.inner.Handle(ctx, r)
		}
		h.draw(r.Message == "reproduce: stage already done", "")
		return nil
	}
	if !h.terminal || st.k == 0 || r.Level >= slog.LevelWarn {
		if st.bar != nil {
			st.bar.Clear()
		}
		return h.inner.Handle(ctx, r)
	}
	// A line from inside the stage: its latest figure goes in the bar.
	var b strings.Builder
	for _, key := range []string{"step", "iter", "val_nll", "reward", "human_reward"} {
		if v, ok := attrs[key]; ok {
			fmt.Fprintf(&b, " %s %s", key, short(v))
		}
	}
	h.draw(false, b.String())
	return nil
}

// draw shows the bar: stage k of n, its name, the detail and the ETA.
func (h *stageHandler) draw(skipped bool, detail string) {
	st := h.st
	if st.bar == nil {
		st.bar = progressbar.NewOptions(max(st.n, 1), progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionShowCount(), progressbar.OptionSetWidth(24), progressbar.OptionSetPredictTime(false), progressbar.OptionClearOnFinish())
	}
	eta := ""
	if st.ran > 0 {
		per := st.now().Sub(st.started) / time.Duration(st.ran)
		eta = " · ETA " + (per * time.Duration(st.n-st.k+1)).Round(time.Second).String()
	}
	state := ""
	if skipped {
		state = " (done before)"
	}
	st.bar.Describe(fmt.Sprintf("stage %d of %d %s%s%s%s", st.k, st.n, st.stage, state, detail, eta))
	st.bar.Set(st.k - 1)
}

func short(v slog.Value) string {
	if v.Kind() == slog.KindFloat64 {
		return fmt.Sprintf("%.3g", v.Float64())
	}
	if v.Kind() == slog.KindAny {
		if f, ok := v.Any().(float64); ok {
			return fmt.Sprintf("%.3g", f)
		}
	}
	return v.String()
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
