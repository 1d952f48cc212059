package train

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
)

// The exported keys are the ones the trainers write: an SFT evaluation,
// an RL iteration with an update and a monitor reading each carry theirs.
func TestRecordsCarryTheExportedKeys(t *testing.T) {
	m, seqs := toySFT(t)
	var sftEval map[string]any
	if _, err := SFT(context.Background(), m, seqs, smallSFT(), t.TempDir(), func(r map[string]any) {
		if _, ok := r[MetricTokensPerS]; ok && sftEval == nil {
			sftEval = r
		}
	}); err != nil {
		t.Fatal(err)
	}
	if sftEval == nil {
		t.Fatal("no SFT evaluation record")
	}
	checkKeys(t, sftEval, MetricStep, MetricSFTLoss, MetricSFTValNLL, MetricTokensPerS)

	var iter, mon map[string]any
	if _, err := GRPO(context.Background(), toyPolicy(t, 80), addTask{}, addUser{lenient: true}, addUser{}, smallGRPO(), t.TempDir(), func(r map[string]any) {
		if n, ok := r[MetricUpdates].(int); ok && n > 0 && iter == nil {
			iter = r
		}
		if _, ok := r[MetricMonitorTrainReward]; ok && mon == nil {
			mon = r
		}
	}); err != nil {
		t.Fatal(err)
	}
	if iter == nil || mon == nil {
		t.Fatalf("no iteration with an update (%v) or no monitor reading (%v)", iter, mon)
	}
	checkKeys(t, iter, MetricStep, MetricReward, MetricFlatGroups, MetricPolicyLoss, MetricKL, MetricClipFrac, MetricUpdates, MetricSequences, MetricTokensPerS)
	checkKeys(t, mon, MetricStep, MetricMonitorTrainReward, MetricMonitorHumanReward)
}

// ReadRLResult gives back what GRPO returned, from the folder it wrote.
func TestReadRLResultIsTheReturnedResult(t *testing.T) {
	out := t.TempDir()
	cfg := smallGRPO()
	cfg.MonitorEvery = 0
	res, err := GRPO(context.Background(), toyPolicy(t, 80), addTask{}, addUser{lenient: true}, nil, cfg, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadRLResult(out)
	if err != nil || !reflect.DeepEqual(got, res) {
		t.Errorf("ReadRLResult = %+v, %v; GRPO returned %+v", got, err, res)
	}
	// A static run's result file is read the same way.
	static := t.TempDir()
	if err := os.WriteFile(filepath.Join(static, resultFile("static")), []byte(`{"iterations": 4, "last_reward": 0.5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadRLResult(static); err != nil || got.Iterations != 4 || got.LastReward != 0.5 {
		t.Errorf("static result: %+v, %v", got, err)
	}
	if _, err := ReadRLResult(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a folder without a result: %v, want a not-exist error", err)
	}
}

// LogHeadline writes one line per kind of record, with the attributes a
// progress display reads (step, iter, val_nll, reward, human_reward), and
// nothing for other records. A figure the record lacks is left out (the
// first evaluation has no loss: no "loss=<nil>"), and floats keep four
// significant digits.
func TestLogHeadline(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	for _, rec := range []map[string]any{
		{MetricStep: 6, MetricSFTLoss: 1.5, MetricSFTValNLL: 1.25, MetricTokensPerS: 100.0},
		{MetricStep: 2, MetricReward: 0.5, MetricFlatGroups: 1.0, MetricPolicyLoss: 0.1, MetricKL: 0.01, MetricClipFrac: 0.0},
		{MetricStep: 2, MetricMonitorTrainReward: 0.75, MetricMonitorHumanReward: 0.25},
		{MetricStep: 3, "sft/lr": 0.001},
		{"event": "config"},
		{MetricStep: 0, MetricSFTValNLL: 2.0794415416798357},
		{MetricStep: 4, MetricSFTValNLL: 1.123456789, MetricSFTLoss: 0.98765432101, MetricTokensPerS: 12345.678901},
	} {
		LogHeadline(log, "base", rec)
	}
	want := []string{
		`level=INFO msg=base step=6 val_nll=1.25 loss=1.5 tokens_per_s=100`,
		`level=INFO msg=base iter=2 reward=0.5 flat_groups=1 loss=0.1 kl=0.01 clip_frac=0`,
		`level=INFO msg="base monitor" iter=2 train_user_reward=0.75 human_reward=0.25`,
		`level=INFO msg=base step=0 val_nll=2.079`,
		`level=INFO msg=base step=4 val_nll=1.123 loss=0.9877 tokens_per_s=12350`,
	}
	if got := strings.Split(strings.TrimSpace(buf.String()), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// MetricGradTokens counts, once per iteration, the trained (mask > 0)
// tokens of the sequences whose advantage is not zero: a flat group adds
// none, kept for its KL term or not, nor does a sample at its group's
// mean, and a sample cut into several sequences adds all of them.
func TestGradTokensCountTrainedTokensWithAdvantage(t *testing.T) {
	// seq builds a sequence of n ids, the last trained of them trained.
	seq := func(n, trained int) chatlm.Sequence {
		s := chatlm.Sequence{IDs: make([]int, n), Mask: make([]float32, n)}
		for i := range n {
			s.IDs[i] = 3 + i%5
			if i >= n-trained {
				s.Mask[i] = 1
			}
		}
		return s
	}
	// Group 0 (rewards 1, 0, ½, ½): samples 0 and 1 carry signal, 2 and 3
	// sit at the mean. Group 1 (all 1): flat. Sample 0 trains as two
	// sequences (a conversation cut into turns).
	b := rlBatch{
		rewards: []float64{1, 0, 0.5, 0.5, 1, 1, 1, 1},
		seqs: []chatlm.Sequence{seq(12, 5), seq(9, 4), seq(10, 3), seq(8, 6), seq(11, 2),
			seq(10, 7), seq(7, 7), seq(9, 1), seq(12, 4)},
		owner: []int{0, 0, 1, 2, 3, 4, 5, 6, 7},
	}
	b.sampled = make([][]float32, len(b.seqs))
	const want = 5 + 4 + 3 // the two sequences of sample 0, and sample 1's
	for _, keep := range []bool{false, true} {
		cfg := smallGRPO()
		cfg.Group, cfg.KeepFlatGroups = 4, keep
		r, err := newRLRun(toyPolicy(t, 0), addTask{}, addUser{}, nil, cfg, "grpo", t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		adv := GroupAdvantages(b.rewards, cfg.Group, cfg.AdvEps)
		us, err := r.update(b.seqs, b.seqAdvantages(adv), b.sampled, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := us.metrics()[MetricGradTokens]; got != want {
			t.Errorf("keep flat groups %v: %s = %v, want %d", keep, MetricGradTokens, got, want)
		}
	}
	// Every group flat: no step, and no gradient token.
	cfg := smallGRPO()
	cfg.Group = 4
	r, err := newRLRun(toyPolicy(t, 0), addTask{}, addUser{}, nil, cfg, "grpo", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	us, err := r.update(b.seqs[5:], make([]float64, 4), b.sampled[5:], 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := us.metrics()[MetricGradTokens]; got != 0 || us.steps != 0 {
		t.Errorf("all flat: %s = %v after %d steps, want 0 and no step", MetricGradTokens, got, us.steps)
	}
}
