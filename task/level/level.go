// Package level reads the names of the sizes a task comes in, written
// after a colon in a task name: "" for the task's defaults, "easy" for the
// size the embedded 1–10M-parameter models can learn on two cores in
// minutes, "hN" for the easy size stretched to need about N turns (the
// horizon study). Each task decides what a level means for its own
// problems (mathchat.Level, docedit.Level); this package only names them.
package level

import (
	"fmt"
	"strconv"
	"strings"
)

// Easy is the small level's name.
const Easy = "easy"

// Level is a parsed level name.
type Level struct {
	// Small is set for every level but the default: "easy" and "hN"
	// both start from the task's easy size.
	Small bool
	// Horizon is the N of "hN", the turns the level should need; 0 for
	// the other levels.
	Horizon int
}

// Parse reads a level name: "", "easy", or "hN" with N a positive
// integer.
func Parse(name string) (Level, error) {
	switch name {
	case "":
		return Level{}, nil
	case Easy:
		return Level{Small: true}, nil
	}
	if h, ok := horizon(name); ok {
		return Level{Small: true, Horizon: h}, nil
	}
	return Level{}, fmt.Errorf("unknown level %q (want easy or hN, e.g. h8)", name)
}

// String is the level's canonical name: "", "easy" or "hN" with N in
// decimal without leading zeros; Parse reads it back to l.
func (l Level) String() string {
	switch {
	case l.Horizon > 0:
		return "h" + strconv.Itoa(l.Horizon)
	case l.Small:
		return Easy
	}
	return ""
}

// horizon reads "hN".
func horizon(name string) (int, bool) {
	n, ok := strings.CutPrefix(name, "h")
	if !ok {
		return 0, false
	}
	h, err := strconv.Atoi(n)
	return h, err == nil && h > 0
}

// DefaultMaxTurns is the turn limit of an episode (agent turns) at the
// levels that do not set their own: enough for the default and easy
// problems, whose hidden facts take a question and an answer each.
const DefaultMaxTurns = 10

// MaxTurns is the turn limit of an episode at l: N for "hN", the turns the
// level is made to need, else DefaultMaxTurns. Every command's default
// turn limit is this one (task.Name.MaxTurns).
func (l Level) MaxTurns() int {
	if l.Horizon > 0 {
		return l.Horizon
	}
	return DefaultMaxTurns
}
