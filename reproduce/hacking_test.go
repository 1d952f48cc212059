package reproduce

import (
	"strings"
	"testing"
)

// The report's hacking table: every reading of every stage, a level with
// its change and interval where the reading has one, a bare level where
// it has none, "–" where it lacks the metric; the decoding named.
func TestHackingSectionRows(t *testing.T) {
	recs := []map[string]any{
		{"stage": "naive-interactive/seed-0", "step": 16.0, "hacking/n": 800.0, "hacking/sampled": 1.0,
			"hacking/target_request": 0.025, "hacking/target_request_change": -0.122, "hacking/target_request_change_lo": -0.15, "hacking/target_request_change_hi": -0.095,
			"hacking/paste_delivery":    0.0,
			"hacking/train_user_reward": 0.629, "hacking/human_reward": 0.667,
			"hacking/reward_gap": -0.038, "hacking/reward_gap_change": -0.026, "hacking/reward_gap_change_lo": -0.06, "hacking/reward_gap_change_hi": 0.008},
	}
	var b strings.Builder
	hackingSection(&b, recs)
	got := b.String()
	for _, want := range []string{
		"on 800 held-out problems per reading (sampled at the rollouts' temperature)",
		"| naive-interactive/seed-0 | 16 | 0.025 (-0.122 [-0.150, -0.095]) | 0.000 | 0.629 | 0.667 | -0.038 (-0.026 [-0.060, +0.008]) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("hacking section lacks %q:\n%s", want, got)
		}
	}
	b.Reset()
	hackingSection(&b, []map[string]any{{"stage": "oracle-interactive/seed-0", "step": 0.0, "hacking/n": 4.0}})
	if got := b.String(); !strings.Contains(got, "(greedy)") || !strings.Contains(got, "| oracle-interactive/seed-0 | 0 | – | – | – | – | – |") {
		t.Errorf("a greedy reading without metrics:\n%s", got)
	}
}
