package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// randomText is n letters and spaces that compress about as poorly as
// real text.
func randomText(r *rand.Rand, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz     ,.0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// syntheticEpisode is episode i of a log of varied shapes: one to eight
// agent turns (or none), solved or not, ending by the user or the limit.
func syntheticEpisode(r *rand.Rand, i, textLen int) dialog.Episode {
	o := dialog.Oracle{Task: "guess", ID: fmt.Sprintf("guess/train/%d", i), Split: "train",
		Instruction: randomText(r, textLen), Opening: "guess my number", Truth: fmt.Sprint(i % 97)}
	v := dialog.View{Task: "guess", Instructions: "Find the number."}
	msgs := []dialog.Message{{Role: dialog.RoleUser, Content: randomText(r, 1+r.IntN(textLen))}}
	turns := r.IntN(9)
	for range turns {
		msgs = append(msgs, dialog.Message{Role: dialog.RoleAssistant, Content: randomText(r, 1+r.IntN(textLen))})
		if r.IntN(4) > 0 {
			msgs = append(msgs, dialog.Message{Role: dialog.RoleUser, Content: randomText(r, 1+r.IntN(textLen))})
		}
	}
	ep := dialog.Episode{ID: fmt.Sprintf("guess/train/%d/0", i), Task: "guess", Split: "train", Index: i, Sample: i % 3,
		Seed: r.Uint64(), MaxTurns: 8, Agent: "scripted:x", User: "human", Oracle: o, View: v, Messages: msgs, Turns: turns}
	switch {
	case turns > 0 && r.IntN(3) == 0:
		ep.End, ep.Success, ep.Reward = dialog.Solved, true, 1
	case r.IntN(2) == 0:
		ep.End, ep.Reward = dialog.GaveUp, r.Float64()
	default:
		ep.End = dialog.MaxTurns
	}
	return ep
}

func syntheticEpisodes(n, textLen int, seed uint64) []dialog.Episode {
	r := rand.New(rand.NewPCG(seed, 1))
	eps := make([]dialog.Episode, n)
	for i := range eps {
		eps[i] = syntheticEpisode(r, i, textLen)
	}
	return eps
}

// readerOf is the episodes as the command reads them: JSON Lines through
// a dialog.EpisodeReader.
func readerOf(t *testing.T, eps []dialog.Episode) *dialog.EpisodeReader {
	t.Helper()
	var buf bytes.Buffer
	if err := dialog.WriteEpisodes(&buf, eps); err != nil {
		t.Fatal(err)
	}
	return dialog.NewEpisodeReader(&buf, "logs.jsonl")
}

// The streamed file is byte for byte the one the whole-slice writer
// makes, for every kind, format and filter. The rollouts rows cross
// several Parquet batches and pages.
func TestStreamMatchesWrite(t *testing.T) {
	eps := syntheticEpisodes(400, 160, 7)
	dir := t.TempDir()
	for _, kind := range []string{KindSim, KindPolicy, KindRollouts, KindPrompts} {
		for _, format := range []string{FormatChatJSONL, FormatParquet} {
			for _, successOnly := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/success-only=%v", kind, format, successOnly)
				t.Run(name, func(t *testing.T) {
					opt := Options{Kind: kind, Format: format, SuccessOnly: successOnly}
					whole := filepath.Join(dir, strings.ReplaceAll(name, "/", "_")+".whole")
					streamed := filepath.Join(dir, strings.ReplaceAll(name, "/", "_")+".streamed")
					n, err := Write(whole, eps, opt)
					if err != nil {
						t.Fatal(err)
					}
					st, err := Stream(context.Background(), streamed, readerOf(t, eps), opt)
					if err != nil {
						t.Fatal(err)
					}
					if st.Rows != n || st.Episodes != len(eps) {
						t.Errorf("streamed %+v, whole writer %d rows of %d episodes", st, n, len(eps))
					}
					if kind == KindRollouts && !successOnly && n <= BatchRows {
						t.Fatalf("only %d rollout rows: the test must cross Parquet batches", n)
					}
					want, _ := os.ReadFile(whole)
					got, _ := os.ReadFile(streamed)
					if !bytes.Equal(got, want) {
						t.Errorf("streamed %d bytes, the whole-slice writer %d: not the same file", len(got), len(want))
					}
				})
			}
		}
	}
}

// generator makes episodes on demand, as a large log file read one line
// at a time does, and samples the live heap every so often.
type generator struct {
	r        *rand.Rand
	n, next  int
	textLen  int
	sample   int
	heap     []uint64 // live heap at each sample
	cancel   func()   // called before episode cancelAt, when set
	cancelAt int
}

func (g *generator) Next() (dialog.Episode, error) {
	if g.cancel != nil && g.next == g.cancelAt {
		g.cancel()
	}
	if g.next == g.n {
		return dialog.Episode{}, io.EOF
	}
	if g.sample > 0 && g.next%g.sample == 0 {
		// Twice, so that pooled codec buffers (sync.Pool keeps them one
		// collection more) do not count.
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		g.heap = append(g.heap, ms.HeapAlloc)
	}
	ep := syntheticEpisode(g.r, g.next, g.textLen)
	g.next++
	return ep, nil
}

// Memory does not grow with the number of episodes: after the first
// quarter of an 18 MB log the live heap stays within a few megabytes of
// where it was, in both formats (for Parquet, the encoded pages go to
// temporary files, not the heap).
func TestStreamMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("exports 12000 episodes")
	}
	const n, textLen = 12000, 300
	dir := t.TempDir()
	for _, format := range []string{FormatChatJSONL, FormatParquet} {
		t.Run(format, func(t *testing.T) {
			g := &generator{r: rand.New(rand.NewPCG(3, 3)), n: n, textLen: textLen, sample: 1000}
			out := filepath.Join(dir, "policy."+format)
			st, err := Stream(context.Background(), out, g, Options{Kind: KindPolicy, Format: format})
			if err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			base := g.heap[len(g.heap)/4]
			peak := base
			for _, h := range g.heap[len(g.heap)/4:] {
				peak = max(peak, h)
			}
			const limit = 5 << 20
			t.Logf("%d episodes, %d rows, %d MB written; live heap %d MB after a quarter, peak %d MB",
				st.Episodes, st.Rows, info.Size()>>20, base>>20, peak>>20)
			if info.Size() < 2*limit {
				t.Fatalf("only %d bytes written: too little to tell growth from noise", info.Size())
			}
			if peak-base > limit {
				t.Errorf("live heap grew by %d MB over the last three quarters of the export (limit %d MB)", (peak-base)>>20, limit>>20)
			}
		})
	}
}

// countingWriter counts the JSON lines written to it.
type countingWriter struct{ lines int }

func (w *countingWriter) Write(b []byte) (int, error) {
	w.lines += bytes.Count(b, []byte{'\n'})
	return len(b), nil
}

// Each episode's rows are out before the next episode is read: the writer
// holds one episode at a time (JSON lines) or less than one batch of
// rows (Parquet).
func TestStreamHoldsOneEpisodeAtATime(t *testing.T) {
	eps := syntheticEpisodes(300, 40, 9)
	var w countingWriter
	rw := newRowWriter(&w, Options{Kind: KindRollouts, Format: FormatChatJSONL})
	defer rw.release()
	want := 0
	for i := range eps {
		rw.add(&eps[i])
		want += len(RolloutRows(eps[i:i+1], false))
		if w.lines != want {
			t.Fatalf("after episode %d: %d lines written, want %d", i, w.lines, want)
		}
	}
	pq := newRowWriter(io.Discard, Options{Kind: KindRollouts, Format: FormatParquet}).(*sink[RolloutRow])
	defer pq.release()
	for i := range eps {
		pq.add(&eps[i])
		if len(pq.batch) >= BatchRows || cap(pq.batch) > BatchRows {
			t.Fatalf("after episode %d: %d rows held (capacity %d), want under %d", i, len(pq.batch), cap(pq.batch), BatchRows)
		}
	}
	if pq.rows() < BatchRows {
		t.Fatalf("only %d rows: the test must cross a batch", pq.rows())
	}
}

// An export interrupted part way (ctx cancelled, as SIGINT and SIGTERM
// do) or failing on a bad line leaves no file, partial or temporary, and
// says why.
func TestStreamInterruptedLeavesNoFile(t *testing.T) {
	for _, format := range []string{FormatChatJSONL, FormatParquet} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "rollouts."+format)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			g := &generator{r: rand.New(rand.NewPCG(5, 5)), n: 1000, textLen: 60, cancel: cancel, cancelAt: 800}
			_, err := Stream(ctx, out, g, Options{Kind: KindRollouts, Format: format})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("got %v, want context.Canceled", err)
			}
			if g.next != g.cancelAt+1 { // the episode read as the interrupt came is the last
				t.Errorf("read %d episodes, want to stop at the interrupt after %d", g.next, g.cancelAt+1)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("an interrupted export left %v", entries)
			}

			var buf bytes.Buffer
			dialog.WriteEpisodes(&buf, syntheticEpisodes(50, 40, 1))
			buf.WriteString("{\"id\": 3\n")
			_, err = Stream(context.Background(), out, dialog.NewEpisodeReader(&buf, "logs.jsonl"), Options{Kind: KindRollouts, Format: format})
			if err == nil || !strings.HasPrefix(err.Error(), "logs.jsonl:51: ") {
				t.Errorf("got %v, want the bad line's error naming logs.jsonl:51", err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("a failed export left %v", entries)
			}
		})
	}
}

// Filters behave as in Write: no rows is an error naming the episodes
// read, and leaves no file.
func TestStreamNoRows(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	_, err := Stream(context.Background(), out, readerOf(t, episodes()[1:]), Options{Kind: KindPolicy, Format: FormatChatJSONL, SuccessOnly: true})
	want := "export " + out + ": no rows from 2 episodes (kind policy, success only true)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if _, err := Stream(context.Background(), out, readerOf(t, episodes()), Options{Kind: "dpo", Format: FormatChatJSONL}); err == nil {
		t.Error("got no error for an unknown kind")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("got %v left behind, want nothing", entries)
	}
}
