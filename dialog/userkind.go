package dialog

import (
	"fmt"
	"strings"
)

// UserKind is a kind of user, the one definition of the words that name
// them. It lives beside User rather than in package task because the task
// families, which task imports, play Human and Naive themselves: every package passes the typed value, and only the edges where
// text comes in (a flag, a user spec "learned:DIR", a served episode's
// user) read it through ParseUserKind. Its text (String) is what
// episodes record as their user and what the command line accepts.
type UserKind string

// The kinds of user. Human and Naive are the task's own scripted users
// (Task.User); the others are models that package spec loads.
const (
	// Human is the held-out proxy of a real person: every method is
	// finally judged against it and none may train on it except the
	// oracle arm (the privileged upper reference).
	Human UserKind = "human"
	// Naive is the prompted-style simulator with its artifacts
	// (sycophancy, leakage, over-sharing).
	Naive UserKind = "naive"
	// Learned is a calibrated simulator checkpoint conditioned on the
	// oracle context; LearnedNoContext the same fitted without it.
	Learned          UserKind = "learned"
	LearnedNoContext UserKind = "learned-nocontext"
	// Remote is an LLM behind an OpenAI-compatible endpoint.
	Remote UserKind = "remote"
)

// UserKinds lists every kind in the order help texts name them.
var UserKinds = []UserKind{Human, Naive, Learned, LearnedNoContext, Remote}

// String is the kind's name ("human").
func (k UserKind) String() string { return string(k) }

// Scripted reports a kind the task itself plays (task.Task.User): Human and
// Naive.
func (k UserKind) Scripted() bool { return k == Human || k == Naive }

// ParseUserKind reads a kind's name, the inverse of String.
func ParseUserKind(s string) (UserKind, error) {
	for _, k := range UserKinds {
		if s == string(k) {
			return k, nil
		}
	}
	names := make([]string, len(UserKinds))
	for i, k := range UserKinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("unknown user kind %q (known: %s)", s, strings.Join(names, ", "))
}

// UnknownUser is the error of a task.Task.User asked for a kind it does not
// play, naming the task family and the kinds it does.
func UnknownUser(family string, k UserKind) error {
	return fmt.Errorf("%s: unknown user %q (known: %s, %s)", family, k, Human, Naive)
}
