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
}

// WithLedger is the option that gives mathchat its ledger
// (mathchat.Ledger): "mathchat:h8:ledger", or "mathchat:ledger" at the
// default level.
const WithLedger = "ledger"

// NoCalculator is the option that turns mathchat's calculator off:
// "mathchat:easy:nocalc", or "mathchat:nocalc" at the default level.
const NoCalculator = "nocalc"

// Levels are the sizes a task comes in, named after a colon:
// "mathchat" is the task's default, "mathchat:easy" a smaller problem
// (one step, one-digit numbers, one or two hidden facts; for docedit shorter
// documents with one or two edits) that the embedded models learn within
// the quick preset's minutes, and "mathchat:h8" the easy problem grown to
// need about 8 turns (more hidden facts and steps; for docedit more
// edits), for the horizon study.
var Levels = []string{"", "easy", "hN"}

// Lookup builds the task named "NAME", "NAME:LEVEL", or either followed
// by ":nocalc" (mathchat without its calculator) or ":ledger" (mathchat
// with its ledger of the numbers told), and then optionally by
// ":data=PATH[#sha256:HEX]" (instances from the user's data; see WithData).
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
// the data path absolute and clean, its hash kept when the name gives one.
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
	switch {
	case n.o.noCalculator:
		out += ":" + NoCalculator
	case n.o.ledger:
		out += ":" + WithLedger
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
	lv, opt, _ := strings.Cut(rest, ":")
	if (lv == NoCalculator || lv == WithLedger) && opt == "" {
		lv, opt = "", lv
	}
	var o options
	switch opt {
	case "":
	case NoCalculator:
		if base != "mathchat" {
			return taskName{}, fmt.Errorf("task %q: %s has no calculator to turn off", name, base)
		}
		o.noCalculator = true
	case WithLedger:
		if base != "mathchat" {
			return taskName{}, fmt.Errorf("task %q: %s has no ledger", name, base)
		}
		o.ledger = true
	default:
		return taskName{}, fmt.Errorf("task %q: unknown option %q (want %s or %s, or data=PATH last)", name, opt, NoCalculator, WithLedger)
	}
	if strings.ContainsAny(lv, `/\.`) {
		return taskName{}, fmt.Errorf("task %q: %q is not a level; give a data folder or file with --data %s (or as %q)", name, lv, rest, base+dataOption+rest)
	}
	return taskName{base: base, level: lv, o: o, build: c}, nil
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
