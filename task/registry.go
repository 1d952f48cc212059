package task

import (
	"errors"
	"path/filepath"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/docedit"
	"github.com/calibrl/calibrl/task/mathchat"
	"github.com/calibrl/calibrl/task/support"
)

// family is what a task family declares: the options its names may carry,
// the measure its episodes are judged by, the files of a data folder that
// make its data, and how to build it. A new task adds itself here.
type family struct {
	// options are the switches a name may carry after the level, in the
	// order String writes them.
	options []Option
	// measure is what the family's episodes are judged by.
	measure dialog.Measure
	// oracle lists the dialog.Oracle fields, beyond those every task
	// fills (instruction, ground truth, hidden facts), that the family's
	// instances need: a human log of the task must carry them.
	oracle []string
	// dataFiles lists the files of a data folder the family reads (their
	// bytes are the data's identity, DataHash).
	dataFiles func(dir string) ([]string, error)
	// build builds the task n names, on the data at path ("" for the
	// family's generator).
	build func(n Name, path string) (Task, error)
	// simMends is whether reproduce holds the family's calibrated
	// simulator to its problem's facts by default (its own ledger and
	// copying what it holds; Name.SimMends): where they were measured
	// to bring every pipeline's simulator closer to the human proxy.
	simMends bool
}

// Option is a switch a task name may carry after its level: a word
// ("ledger"), or a key with a dose ("leak=2x").
type Option struct {
	// Name is the option as a task name writes it ("ledger",
	// "reward=acceptance"), or the key of a dose ("leak").
	Name string
	// What names what the option acts on, for the error a family without
	// it gives ("docedit has no ledger").
	What string
	// Dose marks an option written NAME=DOSEx (parseDose); a dose of 1x
	// is the default and the canonical name leaves it out.
	Dose bool
}

// WithQuote is the option that gives docedit its quote tool
// (docedit.Quote): "docedit:easy:quote".
const WithQuote = "quote"

// The dose options of the naive simulator's artifacts, for a
// dose-response study: "docedit:quote:leak=2x:syc=0x" multiplies the
// naive user's leakage and over-sharing rates by 2 and its sycophancy by
// 0 (each capped at 1: dialog.NaiveRates.Scaled). A dose is a number
// followed by "x", from 0x to 10x.
const (
	LeakDose       = "leak"
	SycophancyDose = "syc"
)

// AcceptanceReward is the option of the reward ablation:
// "docedit:reward=acceptance" pays the user's acceptance
// (dialog.Accepts), under which the naive simulator's sycophancy pays.
const AcceptanceReward = "reward=acceptance"

// allOptions are every family's options, in the order names write them.
var allOptions = []Option{
	{Name: NoCalculator, What: "calculator to turn off"},
	{Name: WithLedger, What: "ledger"},
	{Name: WithUserLedger, What: "user ledger"},
	{Name: WithQuote, What: "quote tool"},
	{Name: LeakDose, What: "naive user's leakage dose", Dose: true},
	{Name: SycophancyDose, What: "naive user's sycophancy dose", Dose: true},
	{Name: AcceptanceReward, What: "acceptance reward"},
}

// options picks the named ones of allOptions, in its order.
func options(names ...string) []Option {
	var out []Option
	for _, o := range allOptions {
		for _, n := range names {
			if o.Name == n {
				out = append(out, o)
			}
		}
	}
	return out
}

// WithLedger is the option that gives mathchat its ledger
// (mathchat.Ledger): "mathchat:h8:ledger", or "mathchat:ledger" at the
// default level.
const WithLedger = "ledger"

// WithUserLedger is the option that gives a task's learned user
// simulator its own ledger (package userledger: after each agent turn that
// asks about a fact the user holds, a note to the simulator alone stating
// it: mathchat's withheld statement, support's id or new value, docedit's
// next change): "mathchat:h8:ledger:userledger", "support:easy:userledger",
// "docedit:easy:userledger". It composes with every other option and
// level; a simulator fitted with it must be played with it (spec).
const WithUserLedger = "userledger"

// NoCalculator is the option that turns mathchat's calculator off:
// "mathchat:easy:nocalc", or "mathchat:nocalc" at the default level.
const NoCalculator = "nocalc"

// OracleDraft names dialog.Oracle's Draft, the document the agent starts
// from, among a family's oracle fields.
const OracleDraft = "draft"

// families maps family names to their declarations.
var families = map[string]family{
	"docedit": {
		options: options(WithUserLedger, WithQuote, LeakDose, SycophancyDose, AcceptanceReward),
		measure: dialog.Measure{Name: "BLEU", Metric: dialog.MetricBLEU, Unit: "points", Scale: 100},
		oracle:  []string{OracleDraft},
		// Off: on seeds 1 and 2 the ledger widened the base's BLEU gap on
		// validation (−9.7 to −15.3 points, −5.5 to −12.6) and the copy
		// did on seed 1 (to −13.2) (results/docedit-quick-ledgercopy/);
		// docedit's simulator is off in its acts, not in facts it
		// misstates.
		simMends: false,
		dataFiles: func(dir string) ([]string, error) {
			return filepath.Glob(filepath.Join(dir, "*.txt")) // Glob sorts
		},
		build: func(n Name, path string) (Task, error) {
			cfg, err := docedit.Level(n.Level)
			if err != nil {
				return nil, err
			}
			cfg.Quote, cfg.AcceptanceReward, cfg.Naive = n.Has(WithQuote), n.Has(AcceptanceReward), n.naive(cfg.Naive)
			cfg.UserLedger = n.Has(WithUserLedger)
			cfg.Corpus, cfg.Spec = path, n.String()
			return docedit.New(cfg)
		},
	},
	"mathchat": {
		options: options(NoCalculator, WithLedger, WithUserLedger, LeakDose, SycophancyDose, AcceptanceReward),
		measure: dialog.Success,
		// Five pipelines' base gaps inside 0.05 with both, up to 0.15 off
		// without (results/mathchat-quick-ledgercopy/).
		simMends: true,
		dataFiles: func(dir string) ([]string, error) {
			return []string{filepath.Join(dir, "train.jsonl"), filepath.Join(dir, "test.jsonl")}, nil
		},
		build: func(n Name, path string) (Task, error) {
			cfg, err := mathchat.Level(n.Level)
			if err != nil {
				return nil, err
			}
			cfg.Calculator = !n.Has(NoCalculator)
			cfg.Ledger, cfg.AcceptanceReward, cfg.Naive = n.Has(WithLedger), n.Has(AcceptanceReward), n.naive(cfg.Naive)
			cfg.UserLedger = n.Has(WithUserLedger)
			cfg.GSM8K, cfg.Spec = path, n.String()
			return mathchat.New(cfg)
		},
	},
	"support": {
		options: options(WithUserLedger),
		measure: dialog.Success,
		// Three pipelines' base gaps from −0.17 to −0.30 to inside 0.05
		// (results/support-quick-values/).
		simMends: true,
		dataFiles: func(string) ([]string, error) {
			return nil, errors.New("support reads no data: its instances are generated")
		},
		build: func(n Name, path string) (Task, error) {
			if path != "" {
				return nil, errors.New("support reads no data: its instances are generated")
			}
			cfg, err := support.Level(n.Level)
			if err != nil {
				return nil, err
			}
			cfg.UserLedger, cfg.Spec = n.Has(WithUserLedger), n.String()
			return support.New(cfg)
		},
	},
}
