package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// report renders a run folder's page where --out says, and refuses a
// folder that is not a finished run. A hand-built summary stands in for
// a run: rendering needs no training.
func TestReportRendersARunFolder(t *testing.T) {
	dir := t.TempDir()
	summary := `[{"arm": "base", "success": 0.5, "ci95": [0.4, 0.6]},
 {"arm": "oracle-interactive", "success": 0.6, "ci95": [0.5, 0.7],
  "comparisons": [{"claim": "oracle-interactive > base", "than": "base", "difference": 0.1, "ci95": [0.02, 0.2], "seeds": [0.1], "holds": true}]}]`
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte(summary), 0o644); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "page.html")
	out := mustRun(t, "report", dir, "--out", page)
	if !strings.Contains(out, page) {
		t.Errorf("report printed %q, want the page's path", out)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `<tr class="claim holds"><td>oracle-interactive &gt; base</td>`) {
		t.Errorf("the page has no verdict row:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
		t.Error("report --out also wrote RUNDIR/report.html")
	}
	if _, err := run(t, "report", t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a finished run") {
		t.Errorf("report of an empty folder: got %v, want a refusal", err)
	}
}
