package reproduce

import (
	"context"

	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/sft"
)

// ArmFilteredBC is the cheap alternative a user would try before RL:
// behaviour cloning filtered to the conversations that succeeded. It
// fine-tunes the base on the logs' solved conversations alone
// (Preset.FilteredBC's budget, from the base's weights), once per RL seed
// index k with the seed RLSeed(seed, k) for its batch order, so that it
// has seeds like the RL arms and every table treats it as one of them. It
// trains with Config.FilteredBC.
const ArmFilteredBC = "filtered-bc"

// trainFilteredBC fine-tunes the base on the solved logged conversations
// for arm a's budget of steps.
func trainFilteredBC(ctx context.Context, r *run, a arm, k int) error {
	all, err := r.logs()
	if err != nil {
		return err
	}
	p := &prep{f: r.f, preset: r.cfg.Preset, seed: RLSeed(r.cfg.Seed, k), tasks: []logSet{{t: r.t}}}
	if r.cfg.Shared != "" {
		p.f = &runfolder.Folder{Dir: r.cfg.Shared} // where its tokenizer is
	}
	b := r.cfg.Preset.FilteredBC
	b.Steps = a.budget.iterations
	sc, err := p.sftConfig(r.cfg.Preset.Policy, b, false)
	if err != nil {
		return err
	}
	sc.From = r.ckpt(ArmBase)
	r.cfg.Log.Info("reproduce: filtered BC", "seed", k, "conversations", len(all))
	_, err = sft.FilteredBC(ctx, all, sc, r.armCkpt(a.name, k), r.metricsLog(seedName(a.name, k)))
	return err
}
