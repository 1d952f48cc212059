// Package task names the task families calibrl knows and builds them by
// name for the command line. A task generates instances (an oracle context
// for the user, a view for the agent), judges finished conversations, and
// supplies its own scripted users (the human proxy and the naive simulator)
// and scripted reference agents. Beyond Task, a task may offer optional
// methods found by type assertion (docs/adding-a-task.md): a tool, an
// environment, a turn judge, fidelity probes, and notes to its learned
// simulator of the facts it holds and was asked (UserNotes, built with
// package userledger and turned on by the option WithUserLedger).
package task

import (
	"fmt"
	"sort"

	"github.com/calibrl/calibrl/dialog"
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
	// User returns one of the task's scripted users: dialog.Human (the
	// held-out proxy of a real person) or dialog.Naive (a prompted-style
	// simulator); any other kind is an error (dialog.UnknownUser).
	User(kind dialog.UserKind) (dialog.User, error)
	// Agent returns a scripted reference agent by profile name.
	Agent(profile string) (dialog.Agent, error)
	// Profiles lists the scripted agent profiles.
	Profiles() []string
	// Spec is the name that rebuilds the task (Name's String): its
	// episodes record it.
	Spec() string
}

// Splits are the instance splits every task provides.
var Splits = []string{"train", "test"}

// CheckSplit reports an unknown split name.
func CheckSplit(split string) error {
	_, err := dialog.SplitStream(split)
	return err
}

// Levels are the sizes a task comes in, named after a colon:
// "mathchat" is the task's default, "mathchat:easy" a smaller problem
// (one step, one-digit numbers, one or two hidden facts; for docedit shorter
// documents with one or two edits) that the embedded models learn within
// the quick preset's minutes, and "mathchat:h8" the easy problem grown to
// need about 8 turns (more hidden facts and steps; for docedit more
// edits), for the horizon study.
var Levels = []string{"", "easy", "hN"}

// Lookup builds the task a name names (ParseName): "NAME", "NAME:LEVEL",
// either followed by the family's options (mathchat's ":nocalc", which
// turns its calculator off, and ":ledger", which gives it its ledger of
// the numbers told), and last by the data the instances come from
// (":data=sha256:HEX", data this process holds: UseData; or
// ":data=PATH", read from there).
func Lookup(name string) (Task, error) {
	n, err := ParseName(name)
	if err != nil {
		return nil, err
	}
	return Build(n)
}

// Build builds the task n names. Data named by its hash is found where
// this process holds it (UseData), else at the path the name came with,
// whose bytes must still have that hash.
func Build(n Name) (Task, error) {
	path := ""
	if !n.Data.IsZero() {
		var err error
		if n, path, err = resolveData(n); err != nil {
			return nil, fmt.Errorf("task %q: %w", n, err)
		}
	}
	t, err := families[n.Family].build(n, path)
	if err != nil {
		return nil, fmt.Errorf("task %q: %w", n, err)
	}
	return t, nil
}

// MeasureOf is what the task name judges its episodes by; success for a
// name that does not parse (the caller's Lookup reports that).
func MeasureOf(name string) dialog.Measure {
	if n, err := ParseName(name); err == nil {
		return n.Measure()
	}
	return dialog.Success
}

// Names lists the known tasks, sorted.
func Names() []string {
	var names []string
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
