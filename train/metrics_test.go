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
// nothing for other records.
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
	} {
		LogHeadline(log, "base", rec)
	}
	want := []string{
		`level=INFO msg=base step=6 val_nll=1.25 loss=1.5 tokens_per_s=100`,
		`level=INFO msg=base iter=2 reward=0.5 flat_groups=1 loss=0.1 kl=0.01 clip_frac=0`,
		`level=INFO msg="base monitor" iter=2 train_user_reward=0.75 human_reward=0.25`,
	}
	if got := strings.Split(strings.TrimSpace(buf.String()), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
