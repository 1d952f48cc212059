package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/gemm"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/train"
)

// benchReport is the --json output: exactly one object.
type benchReport struct {
	Configs    []lm.BenchResult `json:"configs"`
	GemmGFLOPS float64          `json:"gemm_gflops_2048"`
	// RL is the interactive GRPO iteration on model A (absent with --rl=false
	// or without A), its fractions against A's training tokens/s above.
	RL *train.RLBenchResult `json:"rl_iteration,omitempty"`
	// Precision is fp32 against bf16 in the same run (--ab).
	Precision []lm.PrecisionRow `json:"precision,omitempty"`
}

func newBenchCmd() *cobra.Command {
	var (
		asJSON   bool
		models   string
		gemmSize int
		shapes   bool
		rl       bool
		ab       bool
		clockGHz float64
		bc       = lm.DefaultBenchConfig()
		rc       = train.DefaultRLBenchConfig()
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the model engine: training, scoring and sampling speed, and GEMM rate",
		Long: `bench measures the engine on the benchmark models A (vocab 512, d 128,
4 layers, 4 heads, context 256) and B (d 256, 8 heads, otherwise A):
training tokens/s (forward+backward+AdamW on a batch × seq-len batch),
one forward log-prob pass in ms, and KV-cache sampling tokens/s (batch
prompts of prompt-len tokens, new-tokens each), plus gemm.Sgemm's
GFLOP/s on a gemm-size³ product. Each figure is the median of --steps
timed runs after one warm-up. Compare with bench/torch_peer.py run on
the same machine at the same time. --precision sets the arithmetic of
every figure but --ab's, and --sample-precision the sampler's apart
(sampling tokens/s and the GRPO rollout), as for reproduce.

With --rl (the default) it also times one interactive GRPO iteration on
model A, policy and learned user simulator both of config A with fixed
random weights: --rl-instances × --rl-group conversations (8 × 8, the
quick preset's iteration) of 4 agent turns, every turn of a fixed length
(16 tokens) whatever the weights write, then the log-probs the update
needs (the reference model's; the sampler recorded the old ones) and
--rl-updates passes of minibatch-16 updates (1, as the quick preset). It reports each phase (rollout,
log-prob, update) as the trained sequences' tokens per second and as a
fraction of A's training tokens/s from the same run; the median of
--rl-steps iterations after one warm-up.`,
		Example: `  calibrl bench
  calibrl bench --json --steps 10
  calibrl bench --models A --gemm-size 0 --sample-precision bf16   # the GRPO iteration with bf16 rollouts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bc.Validate(); err != nil {
				return err
			}
			if err := rc.Validate(); rl && err != nil {
				return err
			}
			if gemmSize < 0 || gemmSize > lm.MaxBenchGemm {
				return fmt.Errorf("--gemm-size %d, want a value in [0, %d]", gemmSize, lm.MaxBenchGemm)
			}
			var run []lm.NamedConfig
			want := strings.Split(models, ",")
			for _, nc := range lm.BenchModels() {
				if slices.Contains(want, nc.Name) {
					run = append(run, nc)
				}
			}
			if len(run) != len(want) {
				return fmt.Errorf("--models %q: known models are A and B", models)
			}
			rep := benchReport{Configs: []lm.BenchResult{}}
			for _, nc := range run {
				if err := cmd.Context().Err(); err != nil {
					return err
				}
				r, err := lm.Bench(nc, bc)
				if err != nil {
					return err
				}
				rep.Configs = append(rep.Configs, r)
				if rl && nc.Name == "A" {
					rc.Workers = bc.Workers
					res, err := train.BenchRL(cmd.Context(), nc, rc)
					if err != nil {
						return err
					}
					res.SetTrain(r.TrainTokensPerS)
					rep.RL = &res
				}
			}
			if gemmSize > 0 {
				rep.GemmGFLOPS = lm.BenchGemm(gemmSize, bc.Steps)
			}
			if ab {
				q, err := preset.Get("quick")
				if err != nil {
					return err
				}
				nc := lm.NamedConfig{Name: "quick", Config: q.Policy}
				nc.Config.VocabSize = q.Vocab
				rows, err := benchPrecision(cmd.Context(), nc, bc, rc, rl, gemmSize)
				if err != nil {
					return err
				}
				rep.Precision = rows
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(rep)
			}
			if err := printBench(cmd.OutOrStdout(), rep, bc, gemmSize); err != nil {
				return err
			}
			if err := printPrecision(cmd.OutOrStdout(), rep.Precision, bc.Steps, clockGHz, bc.Workers); err != nil {
				return err
			}
			if shapes {
				return printShapes(cmd.OutOrStdout(), lm.BenchGemmShapes(run[0].Config, bc.Batch, bc.SeqLen, bc.Steps))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print one JSON object instead of a table")
	f.IntVar(&bc.Steps, "steps", bc.Steps, "timed repetitions of each measurement")
	f.StringVar(&models, "models", "A,B", "comma-separated benchmark models to run")
	f.IntVar(&bc.Batch, "batch", bc.Batch, "sequences per training/scoring batch and sampling batch")
	f.IntVar(&bc.SeqLen, "seq-len", bc.SeqLen, "tokens per training/scoring sequence")
	f.IntVar(&bc.PromptLen, "prompt-len", bc.PromptLen, "sampling prompt length")
	f.IntVar(&bc.NewTokens, "new-tokens", bc.NewTokens, "tokens sampled per sequence")
	f.IntVar(&bc.Workers, "workers", 0, "goroutines per step (0: GOMAXPROCS)")
	f.IntVar(&gemmSize, "gemm-size", 2048, "square GEMM size to time (0 skips)")
	f.BoolVar(&shapes, "shapes", false, "also time GEMM at the first model's own shapes (table only)")
	f.BoolVar(&rl, "rl", true, "also time an interactive GRPO iteration on model A")
	f.Float64Var(&clockGHz, "clock-ghz", 2.6, "core clock for the bf16 peak --ab reports against (2.6: the nominal clock /proc/cpuinfo gives on the reference machine)")
	f.BoolVar(&ab, "ab", true, "also time fp32 against bf16 side by side on the quick preset's policy shape (GEMM, training, sampling, the GRPO iteration and its tokens/s as a fraction of the same precision's training rate)")
	f.IntVar(&rc.Steps, "rl-steps", rc.Steps, "timed GRPO iterations")
	f.IntVar(&rc.Instances, "rl-instances", rc.Instances, "instances per GRPO iteration")
	f.IntVar(&rc.Group, "rl-group", rc.Group, "conversations per instance (G)")
	f.IntVar(&rc.Updates, "rl-updates", rc.Updates, "passes of updates over each iteration's batch")
	return cmd
}

func printBench(w io.Writer, rep benchReport, bc lm.BenchConfig, gemmSize int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "model\tparams\ttrain tokens/s\tforward ms\tsample tokens/s\t\n")
	for _, r := range rep.Configs {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.1f\t%.0f\t\n", r.Name, r.Params, r.TrainTokensPerS, r.ForwardMS, r.SampleTokensPerS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "(train/forward batch %d×%d in %s, sampling %d prompts of %d + %d new tokens in %s, median of %d runs)\n",
		bc.Batch, bc.SeqLen, lm.ActivePrecision(), bc.Batch, bc.PromptLen, bc.NewTokens, lm.ActiveSamplePrecision(), bc.Steps)
	if gemmSize > 0 {
		fmt.Fprintf(w, "gemm %d³: %.1f GFLOP/s\n", gemmSize, rep.GemmGFLOPS)
	}
	if r := rep.RL; r != nil {
		fmt.Fprintf(w, "\nGRPO iteration on %s against the %s user: %d conversations, %d sequences, %d tokens (rollout sampled in %s; log-probs and update in %s)\n",
			r.Name, r.User, r.Conversations, r.Sequences, r.SequenceTokens, r.SamplePrec, r.Precision)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "phase\ts\ttokens/s\tof train tokens/s\t\n")
		for _, p := range []struct {
			name       string
			s, tps, fr float64
		}{{"rollout", r.RolloutS, r.RollTokensPerS, r.RolloutFraction}, {"log-prob", r.LogprobS, r.LogpTokensPerS, r.LogprobFraction},
			{"update", r.UpdateS, r.UpdTokensPerS, r.UpdateFraction}, {"iteration", r.IterationS, r.IterTokensPerS, r.IterFraction}} {
			fmt.Fprintf(tw, "%s\t%.3f\t%.0f\t%.3f\t\n", p.name, p.s, p.tps, p.fr)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func printShapes(w io.Writer, shapes []lm.GemmShape) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "gemm at model shapes\tm×n×k\top\tGFLOP/s\t\n")
	for _, s := range shapes {
		op := map[[2]bool]string{{false, false}: "NN", {true, false}: "TN", {false, true}: "NT", {true, true}: "TT"}[[2]bool{s.TransA, s.TransB}]
		fmt.Fprintf(tw, "%s\t%d×%d×%d\t%s\t%.1f\t\n", s.Name, s.M, s.N, s.K, op, s.GFLOPS)
	}
	return tw.Flush()
}

// benchPrecision times fp32 against bf16, alternating within each of
// bc.Steps rounds: GEMM and sampling on nc (lm.BenchPrecision; GEMM rows
// at the training batch and at the GRPO step's sampling batch), then,
// with rl, one GRPO iteration of rc's shape at each precision per round.
func benchPrecision(ctx context.Context, nc lm.NamedConfig, bc lm.BenchConfig, rc train.RLBenchConfig, rl bool, gemmSize int) ([]lm.PrecisionRow, error) {
	rows, err := lm.BenchPrecision(nc.Config, bc.Batch*bc.SeqLen, rc.Instances*rc.Group, bc.PromptLen, bc.NewTokens, gemmSize, bc.Steps)
	if err != nil || !rl {
		return rows, err
	}
	defer lm.SetPrecision(lm.SetPrecision(lm.FP32))
	one := rc
	one.Steps = 1
	var f32, b16 []float64
	tokens := 0 // one iteration's trained tokens: the turn script fixes them, whatever the precision
	for range bc.Steps {
		for _, p := range []lm.Precision{lm.FP32, lm.BF16} {
			lm.SetPrecision(p)
			r, err := train.BenchRL(ctx, nc, one)
			if err != nil {
				return nil, err
			}
			tokens = r.SequenceTokens
			if p == lm.FP32 {
				f32 = append(f32, r.IterationS)
			} else {
				b16 = append(b16, r.IterationS)
			}
		}
	}
	slices.Sort(f32)
	slices.Sort(b16)
	iter := lm.PrecisionRow{Name: "GRPO iteration", Unit: "s", FP32: f32[len(f32)/2], BF16: b16[len(b16)/2]}
	rows = append(rows, iter)
	// The iteration's trained tokens per second as a fraction of the same
	// precision's training rate above: how much of plain training's speed
	// the RL loop keeps at each precision.
	if i := rowIndex(rows, lm.TrainingRow); i >= 0 && tokens > 0 {
		t := float64(tokens)
		rows = append(rows, lm.PrecisionRow{Name: "GRPO iteration of training", Unit: "fraction",
			FP32: t / iter.FP32 / rows[i].FP32, BF16: t / iter.BF16 / rows[i].BF16})
	}
	return rows, nil
}

// rowIndex is the index of the row named name, or -1.
func rowIndex(rows []lm.PrecisionRow, name string) int {
	return slices.IndexFunc(rows, func(r lm.PrecisionRow) bool { return r.Name == name })
}

func printPrecision(w io.Writer, rows []lm.PrecisionRow, steps int, clockGHz float64, workers int) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nfp32 against bf16 (%s), alternating, median of %d rounds\n", gemm.BF16KernelName(), steps)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "figure\tunit\tfp32\tbf16\tbf16/fp32\t\n")
	for _, r := range rows {
		ratio := r.BF16 / r.FP32
		if r.Unit == "s" {
			ratio = r.FP32 / r.BF16 // a speed-up, as for the rates
		}
		prec := 1
		if r.Unit == "fraction" {
			prec = 3
		}
		fmt.Fprintf(tw, "%s\t%s\t%.*f\t%.*f\t%.2f×\t\n", r.Name, r.Unit, prec, r.FP32, prec, r.BF16, ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	peak := float64(workers) * clockGHz * gemm.BF16PeakPerCycle()
	for _, r := range rows {
		if strings.HasPrefix(r.Name, "square") && peak > 0 {
			fmt.Fprintf(w, "bf16 peak assumed %.0f GFLOP/s (%d cores × %.2f GHz × %.0f FLOP/cycle): %s reaches %.1f%% of it\n",
				peak, workers, clockGHz, gemm.BF16PeakPerCycle(), r.Name, 100*r.BF16/peak)
		}
	}
	return nil
}
