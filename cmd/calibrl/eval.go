package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/remote"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
)

func newEvalCmd() *cobra.Command {
	var (
		ef          episodeFlags
		agent       string
		asJSON      bool
		episodes    string
		temperature float64
		sliceName   string
		samples     int
		presetName  string
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Play an agent against a user and report success, reward, turns and tokens",
		Long: `eval plays n episodes of an agent with a user on a task's split and reports
the success rate (with a Wilson 95% interval), the mean reward, turns and
tokens per episode, and why episodes ended.

Judge agents against --user human, the held-out proxy of a real person.
Against --user naive the same agent usually looks better than it is: the
naive simulator leaks answers, over-shares hidden facts and accepts wrong
answers, the artifacts of a prompted LLM user.

Choose settings (a checkpoint, a temperature, a budget) with --slice
validation: problems of the test split far from the first ones, with users
seeded apart, which no verdict uses. The default slice, test, is the first
problems of the test split, the ones reproduce's verdict plays: look at it
only with settings already fixed.

--preset (default quick, as reproduce's) sets the task's level and the
turn limit to those reproduce plays at that preset (6 turns at tiny and
quick; N at an hN level), so that an evaluation of a policy trained there
plays the episodes its verdict did; --max-turns overrides the limit.`,
		Example: `  calibrl eval --task mathchat --agent scripted:careful --user human -n 500 --seed 1
  calibrl eval --task mathchat --agent scripted:guesser --user naive --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := presetTask(presetName, &ef.task, &ef.data)
			if err != nil {
				return err
			}
			if ef.maxTurns == 0 {
				ef.maxTurns = p.TurnLimit(ef.task)
			}
			if err := ef.validate(); err != nil {
				return err
			}
			if err := checkTemperature(cmd, temperature); err != nil {
				return err
			}
			slice, err := eval.SliceNamed(sliceName)
			if err != nil {
				return fmt.Errorf("--slice: %w", err)
			}
			if slice != eval.TestSlice && ef.split != "test" {
				return fmt.Errorf("--slice %s is a part of the test split; --split %s has no slices", slice.Name, ef.split)
			}
			t, err := task.Lookup(ef.task)
			if err != nil {
				return err
			}
			if err := checkProblems(t, ef.task, ef.split, slice.Start, ef.n); err != nil {
				return err
			}
			a, err := spec.Agent(t, agent)
			if err != nil {
				return err
			}
			var count func(string) int // tokens as the run's model counts them
			setTemperature(a, temperature)
			if la, ok := a.(*chatlm.Agent); ok {
				count = la.Model.CountTokens
			}
			u, err := spec.User(t, ef.user)
			if err != nil {
				return err
			}
			if episodes != "" {
				if err := checkWritable(episodes, input{"data", ef.dataPath}); err != nil {
					return err
				}
			}
			// Episodes are tallied, and written, as they finish: memory
			// does not grow with -n.
			tally := eval.NewTally(ef.seed)
			classifier, _ := t.(failureClassifier)
			failures := map[string]int{}
			if samples < 1 || samples > maxSamples {
				return fmt.Errorf("--samples %d: want 1 to %d", samples, maxSamples)
			}
			tried, solved := map[int]int{}, map[int]int{} // by problem, for pass@k
			play := func(w io.Writer) error {
				return rollout.Stream(cmd.Context(), t, a, u, rollout.Config{
					Split: ef.split, Start: slice.Start, Instances: ef.n, Group: samples, Seed: slice.Seed(ef.seed), MaxTurns: ef.maxTurns, Workers: ef.workers,
					AgentName: agent, UserName: ef.user, Progress: progress("eval", ef.n), CountTokens: count,
				}, func(ep dialog.Episode) error {
					tally.Add(&ep)
					tried[ep.Index]++
					if ep.Success {
						solved[ep.Index]++
					}
					if classifier != nil {
						for _, c := range classifier.FailuresOf(&ep) {
							failures[c]++
						}
					}
					if w == nil {
						return nil
					}
					return dialog.WriteEpisodes(w, []dialog.Episode{ep})
				})
			}
			if episodes != "" {
				err = atomicfile.Write(episodes, play)
			} else {
				err = play(nil)
			}
			if err != nil {
				return err
			}
			s := tally.Summary()
			s.Usage = remoteUsage(map[string]any{"agent": a, "user": u})
			if classifier != nil {
				s.Failures = failures
			}
			if samples > 1 {
				s.PassAtK = eval.PassAtK(samples, tried, solved)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			return printSummary(cmd.OutOrStdout(), s)
		},
	}
	ef.register(cmd, "test")
	cmd.Flags().StringVar(&presetName, "preset", "quick", "play the task at this preset's level and turn limit, as reproduce does: "+joinNames(preset.Names()))
	cmd.Flags().Lookup("max-turns").Usage = "turn limit per episode (agent turns; default the --preset's: N at an hN level, else the preset's, 6 at tiny and quick)"
	cmd.Flags().StringVar(&agent, "agent", "scripted:careful", "who plays the agent: scripted:PROFILE or lm:DIR (a trained policy)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object instead of a table")
	cmd.Flags().Float64Var(&temperature, "temperature", -1, "sampling temperature of an lm:DIR agent; -1 plays greedy, as training's monitor does")
	cmd.Flags().IntVar(&samples, "samples", 1, "episodes per problem (-n problems × samples episodes); above 1 it reports pass@k for k = 1 … samples against the user (the unbiased estimate), for a sampled lm agent")
	cmd.Flags().StringVar(&sliceName, "slice", "test", "part of the test split: test (the first problems; the verdict's) or validation (from problem 20000, users seeded apart; for choosing settings)")
	cmd.Flags().StringVar(&episodes, "episodes-out", "", "also write the episodes as JSONL to this file (as they finish; the file appears only when the run completes)")
	return cmd
}

func printSummary(w io.Writer, s eval.Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "task\t%s\n", s.Task)
	fmt.Fprintf(tw, "agent\t%s\n", s.Agent)
	fmt.Fprintf(tw, "user\t%s\n", s.User)
	fmt.Fprintf(tw, "split\t%s (seed %d)\n", s.Split, s.Seed)
	fmt.Fprintf(tw, "episodes\t%d\n", s.Episodes)
	fmt.Fprintf(tw, "success\t%.3f  [%.3f, %.3f]\n", s.Success, s.SuccessCI95[0], s.SuccessCI95[1])
	fmt.Fprintf(tw, "reward\t%.3f  [%.3f, %.3f]\n", s.Reward, s.RewardCI95[0], s.RewardCI95[1])
	if m := task.MeasureOf(s.Task); !m.IsSuccess() {
		v, ci := s.Of(m)
		fmt.Fprintf(tw, "%s\t%.2f  [%.2f, %.2f]\n", m.Name, v, ci[0], ci[1])
	}
	if s.ChrF != nil {
		v, ci := s.Of(dialog.Measure{Metric: dialog.MetricChrF})
		fmt.Fprintf(tw, "chrF\t%.2f  [%.2f, %.2f]\n", v, ci[0], ci[1])
	}
	if s.NoDelivery != nil {
		fmt.Fprintf(tw, "no delivery\t%.3f\n", *s.NoDelivery)
	}
	fmt.Fprintf(tw, "turns\t%.2f\n", s.Turns)
	fmt.Fprintf(tw, "tokens\t%.1f (agent %.1f)\n", s.Tokens, s.AgentTokens)
	reasons := make([]string, 0, len(s.Ends))
	for r := range s.Ends {
		reasons = append(reasons, string(r))
	}
	sort.Strings(reasons)
	ends := ""
	for i, r := range reasons {
		if i > 0 {
			ends += "  "
		}
		ends += fmt.Sprintf("%s %d", r, s.Ends[dialog.EndReason(r)])
	}
	fmt.Fprintf(tw, "ended\t%s\n", ends)
	if len(s.PassAtK) > 0 {
		var parts []string
		for k := 1; k <= len(s.PassAtK); k++ {
			parts = append(parts, fmt.Sprintf("@%d %.3f", k, s.PassAtK[k]))
		}
		fmt.Fprintf(tw, "pass\t%s\n", strings.Join(parts, "  "))
	}
	if len(s.Failures) > 0 {
		fmt.Fprintf(tw, "why failed\t%s\n", joinCounts(s.Failures))
	}
	if len(s.Usage) > 0 {
		keys := make([]string, 0, len(s.Usage))
		for k := range s.Usage {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%.0f\n", k, s.Usage[k])
		}
	}
	return tw.Flush()
}

// remoteUsage gathers the request and token counts of the remote models
// among players, keyed "remote/ROLE/...".
func remoteUsage(players map[string]any) map[string]float64 {
	var usage map[string]float64
	for role, p := range players {
		r, ok := p.(interface{ Pool() *remote.Pool })
		if !ok {
			continue
		}
		if usage == nil {
			usage = map[string]float64{}
		}
		for k, v := range r.Pool().Stats().Metrics("remote/" + role) {
			usage[k] = v
		}
	}
	return usage
}

// maxSamples bounds --samples: pass@k beyond 64 retries says little a
// user would act on, and each sample is a whole conversation.
const maxSamples = 64

// failureClassifier is a task that says why a conversation failed.
type failureClassifier interface {
	FailuresOf(ep *dialog.Episode) []string
}

// joinCounts writes counts as "key n", most first, then by key.
func joinCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// problemCounter is a task whose splits hold a known number of problems
// (mathchat on a data file): mathchat.Task.Problems.
type problemCounter interface {
	Problems(split string) (n int, ok bool)
}

// checkProblems refuses, before anything is played, a run of n problems
// from start that a finite split cannot hold: the run would otherwise
// abort partway, when the problems ran out.
func checkProblems(t task.Task, name, split string, start, n int) error {
	c, ok := t.(problemCounter)
	if !ok {
		return nil
	}
	have, finite := c.Problems(split)
	if !finite || start+n <= have {
		return nil
	}
	if start > 0 {
		return fmt.Errorf("-n %d from problem %d: the %s split of %s holds %d problems: ask for at most %d", n, start, split, name, have, max(0, have-start))
	}
	return fmt.Errorf("-n %d: the %s split of %s holds %d problems: ask for at most %d", n, split, name, have, have)
}
