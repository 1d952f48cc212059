package reproduce

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/runreport"
)

// Every run ends with report.html beside report.md: one verdict row per
// claim of the summary, the training curves of every RL arm (one chart per
// metric), and the held-out transcripts under every arm.
func TestRunWritesReportHTML(t *testing.T) {
	dir, rows := wholeRun(t)
	data, err := os.ReadFile(filepath.Join(dir, runreport.File))
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	claims := 0
	for _, row := range rows {
		claims += len(row.Comparisons)
	}
	start := strings.Index(page, `id="verdict"`)
	if start < 0 {
		t.Fatal("report.html has no verdict table")
	}
	verdict := page[start : start+strings.Index(page[start:], "</table>")]
	if got := strings.Count(verdict, `<tr class="claim`); got != claims || claims == 0 {
		t.Errorf("the verdict table has %d rows, summary.json %d claims", got, claims)
	}
	// A chart per RL arm and metric it logged (an arm whose groups all
	// tied took no gradient step, so logged no KL, at this size).
	recs, err := (&runfolder.Folder{Dir: dir}).ReadMetrics()
	if err != nil {
		t.Fatal(err)
	}
	logged := map[string]bool{}
	for _, rec := range recs {
		stage, _ := rec["stage"].(string)
		arm, _, ok := strings.Cut(stage, "/seed-")
		for _, m := range runreport.Metrics {
			if _, has := rec[m.Key]; has && ok {
				logged[arm+" "+m.Key] = true
			}
		}
	}
	if got := strings.Count(page, `<svg class="chart"`); got != len(logged) || got < 2*len(rlArms) {
		t.Errorf("report.html has %d curve charts, want %d (one per RL arm and metric logged, at least the monitor's two per arm)", got, len(logged))
	}
	for _, arm := range Arms {
		if !strings.Contains(page, `<header><b>`+arm+`</b>`) {
			t.Errorf("report.html has no transcript of %s", arm)
		}
	}
}
