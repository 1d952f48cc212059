// Package task names the task families calibrl knows and builds them by
// name for the command line. A task generates instances (an oracle context
// for the user, a view for the agent), judges finished conversations, and
// supplies its own scripted users (the human proxy and the naive simulator)
// and scripted reference agents.
package task

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/level"
)

// Task is one family of episodes.
type Task interface {
	// Name is the task's registry name ("mathchat").
	Name() string
	// Instance returns instance index of split ("train" or "test"). The
	// same split and index always give the same instance; the two splits
	// never share an instance.
	Instance(split string, index int) (*dialog.Oracle, *dialog.View, error)
	// Score judges a finished conversation against the oracle.
	Score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score
	// User returns one of the task's scripted users: "human" (the held-out
	// proxy of a real person) or "naive" (a prompted-style simulator).
	User(kind string) (dialog.User, error)
	// Agent returns a scripted reference agent by profile name.
	Agent(profile string) (dialog.Agent, error)
	// Profiles lists the scripted agent profiles.
	Profiles() []string
}

// Splits are the instance splits every task provides.
var Splits = []string{"train", "test"}

// CheckSplit reports an unknown split name.
func CheckSplit(split string) error {
	_, err := dialog.SplitStream(split)
	return err
}

// constructor builds a task at a level with options. Tasks add
// themselves in registry.go.
type constructor func(level string, o options) (Task, error)

// options are the switches a task name may end with, after the level.
type options struct {
	// noCalculator turns mathchat's calculator off (":nocalc").
	noCalculator bool
	// ledger gives mathchat its ledger of the numbers told (":ledger").
	ledger bool
	// quote gives docedit its quote tool (":quote").
	quote bool
	// leak and syc scale the naive simulator's leakage and over-sharing,
	// and its sycophancy (":leak=2x", ":syc=0x"; 1 when not given).
	leak, syc float64
	// acceptance judges the reward by the user's acceptance
	// (":reward=acceptance").
	acceptance bool
}

// WithLedger is the option that gives mathchat its ledger
// (mathchat.Ledger): "mathchat:h8:ledger", or "mathchat:ledger" at the
// default level.
const WithLedger = "ledger"

// NoCalculator is the option that turns mathchat's calculator off:
// "mathchat:easy:nocalc", or "mathchat:nocalc" at the default level.
const NoCalculator = "nocalc"

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

// parseOption sets one option of task base, or says why not.
func (o *options) parse(base, opt string) error {
	only := func(task, what string) error {
		if base != task {
			return fmt.Errorf("%s has no %s", base, what)
		}
		return nil
	}
	key, val, isKV := strings.Cut(opt, "=")
	switch {
	case opt == NoCalculator:
		o.noCalculator = true
		return only("mathchat", "calculator to turn off")
	case opt == WithLedger:
		o.ledger = true
		return only("mathchat", "ledger")
	case opt == WithQuote:
		o.quote = true
		return only("docedit", "quote tool")
	case opt == AcceptanceReward:
		o.acceptance = true
		return nil
	case isKV && (key == LeakDose || key == SycophancyDose):
		d, err := parseDose(val)
		if err != nil {
			return fmt.Errorf("option %q: %w", opt, err)
		}
		if key == LeakDose {
			o.leak = d
		} else {
			o.syc = d
		}
		return nil
	}
	return fmt.Errorf("unknown option %q (want %s, %s, %s, %s=DOSEx, %s=DOSEx or %s; data=PATH last)",
		opt, NoCalculator, WithLedger, WithQuote, LeakDose, SycophancyDose, AcceptanceReward)
}

// parseDose reads a dose "2x" (a multiple of a default rate, 0 to 10).
func parseDose(s string) (float64, error) {
	num, ok := strings.CutSuffix(s, "x")
	d, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || !(d >= 0 && d <= 10) {
		return 0, fmt.Errorf("dose %q: want a multiple of the default rate from 0x to 10x, such as 2x", s)
	}
	return d, nil
}

// naive returns rates scaled by the name's doses.
func (o *options) naive(rates dialog.NaiveRates) dialog.NaiveRates {
	return rates.Scaled(o.leak, o.syc)
}

// Levels are the sizes a task comes in, named after a colon:
// "mathchat" is the task's default, "mathchat:easy" a smaller problem
// (one step, one-digit numbers, one or two hidden facts; for docedit shorter
// documents with one or two edits) that the embedded models learn within
// the quick preset's minutes, and "mathchat:h8" the easy problem grown to
// need about 8 turns (more hidden facts and steps; for docedit more
// edits), for the horizon study.
var Levels = []string{"", "easy", "hN"}

// Lookup builds the task named "NAME", "NAME:LEVEL", or either followed
// by options, each after a colon: ":nocalc" (mathchat without its
// calculator), ":ledger" (mathchat with its ledger of the numbers told),
// ":quote" (docedit's quote tool), ":leak=DOSEx" and ":syc=DOSEx" (the
// naive simulator's artifact rates scaled), ":reward=acceptance" (the
// reward ablation), and then optionally by ":data=PATH[#sha256:HEX]"
// (instances from the user's data; see WithData).
func Lookup(name string) (Task, error) {
	n, err := parseName(name)
	if err != nil {
		return nil, err
	}
	t, err := n.build(n.level, n.o)
	if err != nil {
		return nil, fmt.Errorf("task %q: %w", name, err)
	}
	if _, ok := DataOf(name); ok {
		if t, name, err = withDataOf(t, name); err != nil {
			return nil, err
		}
	}
	dialog.SetTaskName(t, name) // episodes of t record the name that rebuilds it
	return t, nil
}

// Canonical is the one spelling of the task a name builds: the level as
// its task reads it ("h01" and "h1" are "h1"), the option written once,
// the data path absolute and clean, its hash kept when the name gives one;
// options in a fixed order (nocalc, ledger, quote, leak, syc, reward), a
// dose of 1x left out.
// Names that build the same task have the same canonical name, so a cache
// keyed by it holds each task once however a client spells it.
func Canonical(name string) (string, error) {
	n, err := parseName(name)
	if err != nil {
		return "", err
	}
	l, err := level.Parse(n.level)
	if err != nil {
		return "", fmt.Errorf("task %q: %w", name, err)
	}
	out := n.base
	if lv := l.String(); lv != "" {
		out += ":" + lv
	}
	if n.o.noCalculator {
		out += ":" + NoCalculator
	}
	if n.o.ledger {
		out += ":" + WithLedger
	}
	if n.o.quote {
		out += ":" + WithQuote
	}
	if n.o.leak != 1 {
		out += ":" + LeakDose + "=" + strconv.FormatFloat(n.o.leak, 'g', -1, 64) + "x"
	}
	if n.o.syc != 1 {
		out += ":" + SycophancyDose + "=" + strconv.FormatFloat(n.o.syc, 'g', -1, 64) + "x"
	}
	if n.o.acceptance {
		out += ":" + AcceptanceReward
	}
	if d, ok := DataOf(name); ok {
		if d.Path == "" {
			return "", fmt.Errorf("task %q: data= names no path", name)
		}
		abs, err := filepath.Abs(d.Path)
		if err != nil {
			return "", fmt.Errorf("task %q: %w", name, err)
		}
		out += dataOption + abs
		if d.SHA256 != "" {
			out += hashPrefix + d.SHA256
		}
	}
	return out, nil
}

// taskName is a task name read into its parts (Lookup's grammar).
type taskName struct {
	base, level string
	o           options
	build       constructor
}

func parseName(name string) (taskName, error) {
	spec := withoutData(name)
	base, rest, _ := strings.Cut(spec, ":")
	c, ok := registry()[base]
	if !ok {
		return taskName{}, fmt.Errorf("unknown task %q (known: %s; add :easy for the small level)", name, strings.Join(Names(), ", "))
	}
	parts := strings.Split(rest, ":")
	lv, opts := parts[0], parts[1:]
	if isOption(lv) {
		lv, opts = "", parts // the default level, then options
	}
	o := options{leak: 1, syc: 1}
	for _, opt := range opts {
		if err := o.parse(base, opt); err != nil {
			return taskName{}, fmt.Errorf("task %q: %w", name, err)
		}
	}
	if strings.ContainsAny(lv, `/\.`) {
		return taskName{}, fmt.Errorf("task %q: %q is not a level; give a data folder or file with --data %s (or as %q)", name, lv, rest, base+dataOption+rest)
	}
	return taskName{base: base, level: lv, o: o, build: c}, nil
}

// isOption reports whether the part of a task name after a colon is an
// option rather than a level.
func isOption(s string) bool {
	return s == NoCalculator || s == WithLedger || s == WithQuote || strings.Contains(s, "=")
}

// WithLevel is name at level when name gives no level of its own (the
// part after its family is empty or an option): "docedit:quote" at
// "easy" is "docedit:easy:quote"; a name with a level or with data is
// returned as it is.
func WithLevel(name, level string) string {
	family, rest, found := strings.Cut(name, ":")
	first, _, _ := strings.Cut(rest, ":")
	switch {
	case level == "" || strings.Contains(name, dataOption):
		return name // data names its own instances: no level is added
	case !found:
		return name + ":" + level
	case isOption(first):
		return family + ":" + level + ":" + rest
	}
	return name
}

// StripDoses is name without the options that change only the naive
// simulator's rates or the reward (":leak=", ":syc=", ":reward="): the
// task whose human-proxy logs, base policy and simulator a dose-response
// study shares (reproduce.Doses). Its data option, if any, stays last.
func StripDoses(name string) string {
	spec := withoutData(name)
	data := name[len(spec):]
	parts := strings.Split(spec, ":")
	kept := parts[:1]
	for _, p := range parts[1:] {
		key, _, _ := strings.Cut(p, "=")
		if key == LeakDose || key == SycophancyDose || p == AcceptanceReward {
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, ":") + data
}

// Names lists the known tasks, sorted.
func Names() []string {
	var names []string
	for n := range registry() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
