package metric_test

import (
	"fmt"

	"github.com/calibrl/calibrl/metric"
)

// sacreBLEU's README example: three segments, two references each.
func ExampleBLEU_Corpus() {
	hyps := []string{"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."}
	refs := [][]string{
		{"The dog bit the man.", "The dog had bit the man."},
		{"It was not unexpected.", "No one was surprised."},
		{"The man bit him first.", "The man had bitten the dog."},
	}
	b, err := metric.NewBLEU(metric.DefaultBLEUConfig())
	if err != nil {
		panic(err)
	}
	s, err := b.Corpus(hyps, refs)
	if err != nil {
		panic(err)
	}
	fmt.Printf("BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f hyp_len = %d ref_len = %d)\n",
		s.Score, s.Precisions[0], s.Precisions[1], s.Precisions[2], s.Precisions[3], s.BP, s.SysLen, s.RefLen)
	c, _ := metric.NewChrF(metric.DefaultChrFConfig())
	cs, _ := c.Corpus(hyps, refs)
	fmt.Printf("chrF2 = %.2f\n", cs.Score)
	// Output:
	// BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 hyp_len = 17 ref_len = 18)
	// chrF2 = 59.73
}

// The docedit reward: sentence BLEU of the agent's document against the
// target, /100. One wrong word of 9 tokens: 8/9, 6/8, 4/7, 3/6 matched.
func ExampleSentenceBLEU() {
	target := "Meet on Tuesday at 10.30 in room 4."
	draft := "Meet on Monday at 10.30 in room 4."
	fmt.Printf("BLEU %.2f, chrF %.2f\n", metric.SentenceBLEU(draft, target), metric.SentenceChrF(draft, target))
	fmt.Printf("BLEU %.2f, chrF %.2f\n", metric.SentenceBLEU(target, target), metric.SentenceChrF(target, target))
	// Output:
	// BLEU 66.06, chrF 74.53
	// BLEU 100.00, chrF 100.00
}

func ExampleWilsonCI() {
	lo, hi := metric.WilsonCI(45, 50, metric.Z95)
	fmt.Printf("90%% success, 95%% CI [%.3f, %.3f]\n", lo, hi)
	mean, lo, hi := metric.MeanCI([]float64{0.31, 0.42, 0.35, 0.38, 0.29})
	fmt.Printf("mean %.3f, 95%% CI [%.3f, %.3f]\n", mean, lo, hi)
	// Output:
	// 90% success, 95% CI [0.786, 0.957]
	// mean 0.350, 95% CI [0.285, 0.415]
}

// How many pipelines a pooled verdict needs: a between-pipeline spread of
// 0.04, each pipeline's difference known to ±0.025 over its 500 problems
// (standard error), a quarter of that variance shared through the common
// problems, 80% power, at 95% and at the Bonferroni level of a verdict
// reporting 27 claims.
func ExamplePipelinesFor() {
	se := 0.025
	for _, conf := range []float64{0.95, metric.Bonferroni(0.95, 27)} {
		for _, effect := range []float64{0.05, 0.10, 0.15, 0.25} {
			k, err := metric.PipelinesFor(effect, 0.04, se, se*se/4, conf, 0.8, 32, 2000, 1)
			if err != nil {
				panic(err)
			}
			fmt.Printf("level %.4f, difference %.2f: %d pipelines\n", conf, effect, k)
		}
	}
	// Output:
	// level 0.9500, difference 0.05: 17 pipelines
	// level 0.9500, difference 0.10: 5 pipelines
	// level 0.9500, difference 0.15: 4 pipelines
	// level 0.9500, difference 0.25: 3 pipelines
	// level 0.9981, difference 0.05: 0 pipelines
	// level 0.9981, difference 0.10: 10 pipelines
	// level 0.9981, difference 0.15: 7 pipelines
	// level 0.9981, difference 0.25: 5 pipelines
}
