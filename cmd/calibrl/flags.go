package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/reproduce"
)

// Override flags default to a value that means "the preset's" (0, or -1
// where 0 is meaningful). A value given on the command line must be a
// real setting: a negative --steps or --lr used to fall back to the
// preset's silently.

// atLeast checks each named flag that was given against lo (strictly
// above it when strict).
func atLeast(cmd *cobra.Command, lo float64, strict bool, names ...string) error {
	for _, name := range names {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		v, err := strconv.ParseFloat(f.Value.String(), 64)
		if err != nil {
			return fmt.Errorf("--%s %s: %w", name, f.Value.String(), err)
		}
		if strict && !(v > lo) {
			return fmt.Errorf("--%s %s: want > %v", name, f.Value.String(), lo)
		}
		if !strict && !(v >= lo) {
			return fmt.Errorf("--%s %s: want ≥ %v", name, f.Value.String(), lo)
		}
	}
	return nil
}

// checkJobs checks a --jobs flag: 0 is reproduce.DefaultJobs.
func checkJobs(jobs int) error {
	if jobs < 0 {
		return fmt.Errorf("--jobs %d: want at least 1 (or 0 for the default)", jobs)
	}
	return nil
}

// setRLSeeds applies an --rl-seeds flag to p when it was given: the RL
// seeds per arm, 1 to reproduce.MaxRLSeeds (a run folder keeps the count
// it was started with).
func setRLSeeds(cmd *cobra.Command, n int, p *preset.Preset) error {
	if !cmd.Flags().Changed("rl-seeds") {
		return nil
	}
	if n < 1 || n > reproduce.MaxRLSeeds {
		return fmt.Errorf("--rl-seeds %d: want a value in [1, %d]", n, reproduce.MaxRLSeeds)
	}
	p.RLSeeds = n
	return nil
}

// checkTemperature checks a --temperature flag: -1, the default the help
// shows, means "the agent's own" (greedy for lm:DIR), given or not; any
// other value must be a temperature.
func checkTemperature(cmd *cobra.Command, v float64) error {
	if cmd.Flags().Changed("temperature") && v != -1 && !(v >= 0 && v <= 100) {
		return fmt.Errorf("--temperature %v: want a value in [0, 100] (0 is greedy), or -1 for the agent's own", v)
	}
	return nil
}

// setTemperature makes a checkpoint policy (lm:DIR) sample at v when v is
// a temperature (≥ 0); other agents, and v < 0, are left as they are.
func setTemperature(a dialog.Agent, v float64) {
	if la, ok := a.(*chatlm.Agent); ok && v >= 0 {
		la.Gen.Temperature = v
	}
}

// defaultPrecision is --precision's default. See lm.Precision.
const defaultPrecision = "fp32"

// withPrecision gives a command --precision fp32|bf16 (lm.SetPrecision)
// and --sample-precision, the sampler's apart (lm.SetSamplePrecision),
// applied before the command runs.
func withPrecision(cmd *cobra.Command) *cobra.Command {
	var s, sample string
	cmd.Flags().StringVar(&s, "precision", defaultPrecision,
		"arithmetic of the weight matrix products (sampling, log-probs, the loss, and backward's input and weight gradients, accumulated in fp32; the weights, the optimizer, norms, attention and softmax stay fp32): fp32, or bf16 (AMX-BF16 or AVX512_BF16, with the sampler's KV cache in bf16; fp32 where the CPU has neither)")
	cmd.Flags().StringVar(&sample, "sample-precision", "",
		"the sampler's arithmetic apart from --precision's (every generated turn: rollouts, evaluations, fidelity; log-probs a trainer reads and the loss keep --precision's): fp32 or bf16; empty: --precision's; sampling a fixed policy in bf16 moved its success by at most 0.005 (results/README.md, \"bf16 against fp32\")")
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		p, err := lm.ParsePrecision(s)
		if err != nil {
			return fmt.Errorf("--precision: %w", err)
		}
		lm.SetPrecision(p)
		if sample != "" {
			sp, err := lm.ParsePrecision(sample)
			if err != nil {
				return fmt.Errorf("--sample-precision: %w", err)
			}
			lm.SetSamplePrecision(sp)
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
	return cmd
}
