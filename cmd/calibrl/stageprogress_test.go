package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestStageLinesSayKOfN(t *testing.T) {
	var buf bytes.Buffer
	h := newStageHandler(slog.NewTextHandler(&buf, nil), false)
	log := slog.New(h)
	stages := log.With("stages", 3)
	stages.Info("reproduce: stage already done", "stage", "collect")
	stages.Info("reproduce: stage", "stage", "base")
	log.Info("base", "step", 10, "val_nll", 1.5)
	stages.Info("reproduce: stage", "stage", "sim")
	out := buf.String()
	for _, want := range []string{"stages=3 stage=collect k=1 of=3", "stages=3 stage=base k=2 of=3", "msg=base step=10", "stages=3 stage=sim k=3 of=3"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lines lack %q:\n%s", want, out)
		}
	}
}
