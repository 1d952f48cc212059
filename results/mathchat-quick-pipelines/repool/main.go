// Command repool re-pools the committed three-pipeline quick verdict
// (results/mathchat-quick-pipelines) with the random-effects interval
// reproduce now pools with (metric.PipelineInterval), from what the
// folder holds: each pipeline's summaries (its per-claim difference and
// problem-level 95% bootstrap interval) and the former pooled.json. The
// pipelines' episodes were not committed, so the covariance their shared
// test problems induce cannot be measured here; it lies between 0 and one
// pipeline's own variance (per-problem correlation 0 and 1), and both
// bounds are given. Each pipeline's variance is read off its interval:
// ((hi − lo)/(2·1.96))², the intervals rounded to three decimals as
// summary.json holds them. It trains and evaluates nothing.
//
//	go run ./results/mathchat-quick-pipelines/repool > results/mathchat-quick-pipelines/repooled.md
package main

import (
	"encoding/json"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"github.com/calibrl/calibrl/metric"
	"github.com/calibrl/calibrl/summary"
)

var (
	dir   = filepath.Join("results", "mathchat-quick-pipelines")
	seeds = []int{1, 2, 3}
	// summaries holds each decoding's summary file in a pipeline.
	summaries = map[string]string{"sampled": "summary.json", "greedy": "summary-greedy.json", "best-temperature": "summary-best.json"}
)

// oldPooled is the part of the former pooled.json this reads.
type oldPooled struct {
	Decoding string `json:"decoding"`
	Claims   []struct {
		Claim      string     `json:"claim"`
		Difference float64    `json:"difference"`
		CI95       [2]float64 `json:"ci95"`
		CIAdjusted [2]float64 `json:"ci_adjusted"`
		Level      float64    `json:"level"`
		Holds      bool       `json:"holds"`
	} `json:"claims"`
}

func main() {
	var old []oldPooled
	if err := readJSON(filepath.Join(dir, "pooled.json"), &old); err != nil {
		log.Fatal(err)
	}
	m := 0
	for _, p := range old {
		m += len(p.Claims)
	}
	level := metric.Bonferroni(0.95, m)
	fmt.Printf("# The three-pipeline quick verdict, re-pooled with the random-effects interval\n\n")
	fmt.Printf("Written by `go run ./results/mathchat-quick-pipelines/repool` from this folder's `seed-*/summary*.json` and the former `pooled.json` (see repool/main.go). Each claim's pooled difference is the mean of the three pipelines' differences; its interval is metric.PipelineInterval's (SE² = s²/3 + c, Student's t on 2 degrees of freedom), Bonferroni-corrected over all %d claims the verdict reports (%.2f%%: 9 claims × 3 decodings), where the former verdict corrected over the 9 of one decoding (%.2f%%). The episodes were not committed, so c, the covariance the 500 shared test problems induce between two pipelines' differences, is given at its bounds: r = 0 (c = 0, the t interval of the three differences) and r = 1 (c = one pipeline's variance, read off its own 95%% interval). A claim holds when its interval is above 0 at both bounds, fails when at neither, and is undecided here when it depends on r. The former two-level bootstrap's intervals are copied from the former pooled.json. \"Pipelines for 80%%\" is how many pipelines the corrected interval needs to hold with 80%% chance were the true difference the pooled one and the spread the estimated τ (metric.PipelinesFor at r = 0 / r = 1; \"> 32\" when more): the size of a follow-up, not a verdict.\n", m, 100*level, 100*old[0].Claims[0].Level)
	for _, p := range old {
		rows := make([][]summary.Row, len(seeds))
		for i, s := range seeds {
			if err := readJSON(filepath.Join(dir, fmt.Sprintf("seed-%d", s), summaries[p.Decoding]), &rows[i]); err != nil {
				log.Fatal(err)
			}
		}
		fmt.Printf("\n## %s\n\n", p.Decoding)
		fmt.Printf("| claim | pipelines | difference | τ (r = 0) | former 95%% | former %.2f%% | holds? (former) | 95%%, r = 0 | 95%%, r = 1 | %.2f%%, r = 0 | %.2f%%, r = 1 | holds? | pipelines for 80%% |\n", 100*p.Claims[0].Level, 100*level, 100*level)
		fmt.Printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
		for _, c := range p.Claims {
			var means []float64
			var within float64
			for i, s := range seeds {
				cmp, ok := comparison(rows[i], c.Claim)
				if !ok {
					log.Fatalf("seed-%d %s: no claim %q", s, summaries[p.Decoding], c.Claim)
				}
				se := (cmp.CI95[1] - cmp.CI95[0]) / (2 * metric.Z95)
				means, within = append(means, cmp.Difference), within+se*se/float64(len(seeds))
			}
			var est [2][2]metric.PipelineEstimate // [r=0, r=1][95%, corrected]
			var need [2]string
			for j, shared := range []float64{0, within} {
				for l, conf := range []float64{0.95, level} {
					e, err := metric.PipelineIntervalOfMeans(means, within, shared, conf)
					if err != nil {
						log.Fatal(err)
					}
					est[j][l] = e
				}
				e := est[j][0]
				k, err := metric.PipelinesFor(math.Abs(e.Diff), e.Tau, math.Sqrt(within), shared, level, 0.8, 32, 2000, 1)
				if err != nil {
					log.Fatal(err)
				}
				need[j] = fmt.Sprint(k)
				if k == 0 {
					need[j] = "> 32"
				}
			}
			verdict := "undecided (depends on r)"
			switch {
			case est[0][1].Lo > 0 && est[1][1].Lo > 0:
				verdict = "yes"
			case est[0][1].Hi < 0 && est[1][1].Hi < 0:
				verdict = "no: reversed"
			case !(est[0][1].Lo > 0) && !(est[1][1].Lo > 0):
				verdict = "no"
			}
			oldVerdict := "no"
			if c.Holds {
				oldVerdict = "yes"
			}
			fmt.Printf("| %s | %+.3f, %+.3f, %+.3f | %+.3f | %.3f | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |\n", c.Claim, means[0], means[1], means[2], est[0][0].Diff, est[0][0].Tau,
				iv(c.CI95[0], c.CI95[1]), iv(c.CIAdjusted[0], c.CIAdjusted[1]), oldVerdict,
				iv(est[0][0].Lo, est[0][0].Hi), iv(est[1][0].Lo, est[1][0].Hi), iv(est[0][1].Lo, est[0][1].Hi), iv(est[1][1].Lo, est[1][1].Hi), verdict, need[0], need[1])
		}
	}
}

func comparison(rows []summary.Row, claim string) (summary.Comparison, bool) {
	for _, r := range rows {
		for _, c := range r.Comparisons {
			if c.Claim == claim {
				return c, true
			}
		}
	}
	return summary.Comparison{}, false
}

func iv(lo, hi float64) string { return fmt.Sprintf("[%+.3f, %+.3f]", lo, hi) }

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
