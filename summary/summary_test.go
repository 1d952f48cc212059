package summary

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadRowsAndRefuseOtherShapes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rows, err := Read(write("summary.json", `[{"arm": "base", "decoding": "sampled", "success": 0.5, "ci95": [0.4, 0.6]},
		{"arm": "static", "bleu": 61.5, "ci95": [60, 63], "train_reward": 0.7, "gap": 0.2, "seeds": [{"seed": 1, "rl_seed": 9, "bleu": 61}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Value() != 0.5 || rows[1].Value() != 61.5 || rows[1].Seeds[0].RLSeed != 9 || rows[0].Decoding != "sampled" {
		t.Fatalf("rows %+v", rows)
	}
	if h := rows[1].HumanMonitor(); h == nil || math.Abs(*h-0.5) > 1e-12 {
		t.Errorf("human monitor %v, want 0.7 − 0.2", h)
	}
	if rows[0].HumanMonitor() != nil {
		t.Error("the base has a monitor")
	}
	if !math.IsNaN((Figures{}).Value()) {
		t.Error("a row without a figure has a value")
	}
	for name, data := range map[string]string{"object.json": `{"rows": []}`, "empty.json": `[]`, "bad.json": `[{"arm": 1}]`} {
		if _, err := Read(write(name, data)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err %v", name, err)
		}
	}
}
