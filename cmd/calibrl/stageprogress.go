package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	progressevent "github.com/calibrl/calibrl/progress"
	"github.com/calibrl/calibrl/train"
)

// Long work in stages (reproduce) emits progress events (package
// progress): each stage as it starts and ends, and the training figures
// inside it. On a terminal a progress.Board is redrawn in place: one line
// per running stage with its own bar, figures and time left, under a line
// per finished stage, and a footer with the run's ETA; there the run's
// info lines give way to it, and warnings and errors still pass through.
// Without a terminal (a file, CI) the run's log lines stay, and the board
// adds plain progress lines among them: a stage's start and end, and its
// step, figures and time left every 30 s.

// liveBoard draws a board on a terminal.
type liveBoard struct {
	mu    sync.Mutex
	w     io.Writer
	board *progressevent.Board
	width func() int
	drawn int // live lines on screen, the cursor below them
	stop  chan struct{}
	wg    sync.WaitGroup
}

// newStageProgress returns the logger and the progress sink for a run in
// stages, and done, which writes the last line.
func newStageProgress() (log *slog.Logger, prog progressevent.Func, done func()) {
	fd := int(os.Stderr.Fd())
	if !term.IsTerminal(fd) {
		board, log := progressevent.NewBoard(nil), slog.Default()
		var mu sync.Mutex
		return log, func(e progressevent.Event) {
			mu.Lock()
			defer mu.Unlock()
			if line := board.Plain(e); line != "" {
				log.Info(line)
			}
		}, func() {}
	}
	width := func() int {
		if w, _, err := term.GetSize(fd); err == nil {
			return w
		}
		return 0
	}
	b := newLiveBoard(os.Stderr, progressevent.NewBoard(nil), width)
	b.tick(time.Second)
	return slog.New(&barHandler{inner: slog.Default().Handler(), bar: b}), b.render, b.finish
}

func newLiveBoard(w io.Writer, board *progressevent.Board, width func() int) *liveBoard {
	return &liveBoard{w: w, board: board, width: width, stop: make(chan struct{})}
}

// tick redraws every d, so that times move between events.
func (b *liveBoard) tick(d time.Duration) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-t.C:
				b.mu.Lock()
				b.draw(nil)
				b.mu.Unlock()
			}
		}
	}()
}

// render files event e and redraws.
func (b *liveBoard) render(e progressevent.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.draw(b.board.Update(e))
}

// draw prints the finished lines once, then the live lines in place of
// the last ones drawn.
func (b *liveBoard) draw(finished []string) {
	b.clear()
	for _, l := range finished {
		fmt.Fprintln(b.w, l)
	}
	live := b.board.Live(b.width() - 1)
	for _, l := range live {
		fmt.Fprintln(b.w, l)
	}
	b.drawn = len(live)
}

// clear erases the live lines: up to the first, then to the screen's end.
func (b *liveBoard) clear() {
	if b.drawn > 0 {
		fmt.Fprintf(b.w, "\x1b[%dF\x1b[J", b.drawn)
		b.drawn = 0
	}
}

// finish stops the redraws and leaves the run's last line.
func (b *liveBoard) finish() {
	close(b.stop)
	b.wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clear()
	fmt.Fprintln(b.w, b.board.Final())
}

// barHandler passes warnings and errors to inner, clearing the live lines
// first, and drops the info lines the board stands for.
type barHandler struct {
	inner slog.Handler
	bar   *liveBoard
}

func (h *barHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.inner.Enabled(ctx, l)
}

func (h *barHandler) Handle(ctx context.Context, r slog.Record) error {
	h.bar.mu.Lock()
	defer h.bar.mu.Unlock()
	h.bar.clear()
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
