// Package eval summarises episodes into the figures calibrl reports:
// success rate with a Wilson 95% interval, mean reward with a 95% interval,
// turns, tokens, why episodes ended, and task metrics (BLEU, chrF).
package eval

import (
	"sort"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/metric"
)

// Summary is one evaluation's figures. Its JSON form is what
// `calibrl eval --json` prints.
type Summary struct {
	Task     string `json:"task"`
	Agent    string `json:"agent"`
	User     string `json:"user"`
	Split    string `json:"split"`
	Seed     uint64 `json:"seed"`
	Episodes int    `json:"episodes"`
	// Success is the fraction of episodes the task judged solved, with its
	// Wilson 95% interval.
	Success     float64    `json:"success"`
	SuccessCI95 [2]float64 `json:"success_ci95"`
	// Reward is the mean reward, with a normal-approximation 95% interval.
	Reward     float64    `json:"reward"`
	RewardCI95 [2]float64 `json:"reward_ci95"`
	// Turns and Tokens are per-episode means (agent turns; all tokens).
	Turns  float64 `json:"turns"`
	Tokens float64 `json:"tokens"`
	// AgentTokens is the mean number of tokens the agent wrote.
	AgentTokens float64 `json:"agent_tokens"`
	// Ends counts episodes by why they ended.
	Ends map[dialog.EndReason]int `json:"ends"`
	// Metrics holds the mean of each task metric (bleu, chrf) and, under
	// name+"_ci95_lo"/"_ci95_hi", its interval.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// BLEU and ChrF repeat Metrics["bleu"], Metrics["chrf"] for tasks that
	// have them, so scripts need not dig.
	BLEU *float64 `json:"bleu,omitempty"`
	ChrF *float64 `json:"chrf,omitempty"`
	// NoDelivery is the fraction of episodes in which the agent delivered
	// nothing (task metric "delivered" 0: docedit's draft left as it
	// was), for tasks that record it.
	NoDelivery *float64 `json:"no_delivery,omitempty"`
	// PassAtK is, when each problem was played several times (eval
	// --samples), the mean over problems of the unbiased pass@k estimate
	// (metric.PassAtK) for k = 1 … samples: how often a user who may
	// retry k times gets a success.
	PassAtK map[int]float64 `json:"pass_at_k,omitempty"`
	// Failures counts episodes by failure class, for tasks that classify
	// why a conversation failed (mathchat: never asks, miscopies, ...); an
	// episode can be in several.
	Failures map[string]int `json:"failures,omitempty"`
	// Usage holds request and token accounting of remote models
	// ("remote/agent/requests", "remote/user/completion_tokens", ...).
	Usage map[string]float64 `json:"usage,omitempty"`
}

// Summarize computes the figures of eps. The identifying fields (task,
// agent, user, split) are taken from the first episode.
func Summarize(eps []dialog.Episode, seed uint64) Summary {
	s := Summary{Episodes: len(eps), Seed: seed, Ends: map[dialog.EndReason]int{}}
	if len(eps) == 0 {
		return s
	}
	s.Task, s.Agent, s.User, s.Split = eps[0].Task, eps[0].Agent, eps[0].User, eps[0].Split
	successes := 0
	rewards := make([]float64, len(eps))
	metricValues := map[string][]float64{}
	for i, ep := range eps {
		if ep.Success {
			successes++
		}
		rewards[i] = ep.Reward
		s.Turns += float64(ep.Turns)
		s.Tokens += float64(ep.Tokens)
		for _, m := range ep.Messages {
			if m.Role == dialog.RoleAssistant {
				s.AgentTokens += float64(m.Tokens)
			}
		}
		s.Ends[ep.End]++
		for k, v := range ep.Metrics {
			metricValues[k] = append(metricValues[k], v)
		}
	}
	n := float64(len(eps))
	s.Success = float64(successes) / n
	s.SuccessCI95[0], s.SuccessCI95[1] = metric.WilsonCI(successes, len(eps), 1.96)
	s.Reward, s.RewardCI95[0], s.RewardCI95[1] = metric.MeanCI(rewards)
	s.Turns /= n
	s.Tokens /= n
	s.AgentTokens /= n
	if len(metricValues) > 0 {
		s.Metrics = map[string]float64{}
		names := make([]string, 0, len(metricValues))
		for k := range metricValues {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			mean, lo, hi := metric.MeanCI(metricValues[k])
			s.Metrics[k], s.Metrics[k+"_ci95_lo"], s.Metrics[k+"_ci95_hi"] = mean, lo, hi
		}
		s.shortcuts()
	}
	return s
}

// Of is the summary's value of the task's measure m, with its 95%
// interval: the success rate with Wilson's, or the metric's mean with its
// own.
func (s Summary) Of(m dialog.Measure) (float64, [2]float64) {
	if m.IsSuccess() {
		return s.Success, s.SuccessCI95
	}
	return s.Metrics[m.Metric], [2]float64{s.Metrics[m.Metric+"_ci95_lo"], s.Metrics[m.Metric+"_ci95_hi"]}
}

// shortcuts fills the fields that repeat task metrics, for scripts;
// readers that want the task's figure ask for it (Of).
func (s *Summary) shortcuts() {
	if v, ok := s.Metrics[dialog.MetricBLEU]; ok {
		s.BLEU = &v
	}
	if v, ok := s.Metrics[dialog.MetricChrF]; ok {
		s.ChrF = &v
	}
	if v, ok := s.Metrics[dialog.MetricDelivered]; ok {
		nd := 1 - v
		s.NoDelivery = &nd
	}
}

// PassAtK is the mean over problems of metric.PassAtK(n, c, k) for k = 1
// … samples, given each problem's samples n and successes c (by problem
// index). Problems with fewer than samples episodes count with their own
// n, and only for k ≤ n.
func PassAtK(samples int, n, c map[int]int) map[int]float64 {
	out := map[int]float64{}
	for k := 1; k <= samples; k++ {
		var sum float64
		var problems int
		for i, ni := range n {
			if k > ni {
				continue
			}
			sum += metric.PassAtK(ni, c[i], k)
			problems++
		}
		if problems > 0 {
			out[k] = sum / float64(problems)
		}
	}
	return out
}
