// Package progress is the typed stream of events that long work emits for
// a display: a reproduce run's stages, the training steps inside them. The
// work says where it is in fields; the command line renders them (a bar
// on a terminal). Nobody formats a display line in the work or parses a
// log line to draw one.
package progress

import "time"

// Event is one report of where long work stands: a stage starting
// (Index > 0), the same stage finishing (Index > 0 and Done), or a step
// inside Stage (Index 0). Stages may run side by side, so a step event
// names its own stage: a display files it under that stage, not under the
// one that started last.
type Event struct {
	// Stage names the stage ("base", "naive-interactive/seed-0").
	Stage string
	// Index and Of place a starting or finishing stage: stage Index (from
	// 1) of Of. Zero for a step inside a stage.
	Index, Of int
	// Skipped marks a stage found done before (a resumed run).
	Skipped bool
	// Done marks the stage's end: it ran to completion.
	Done bool
	// Step is the step inside the stage (an SFT step, an RL iteration).
	Step int
	// Steps is how many steps the stage is set to make, when the event
	// knows it (0 otherwise); a display keeps the last one it was given.
	Steps int
	// Unit names the stage's steps ("step", "iter"); "" keeps the one
	// given before ("step" until one is given).
	Unit string
	// Figures are the step's headline figures, in the order to show them.
	Figures []Figure
	// Plan, on an event that names no stage, lists stages ahead of time
	// with an estimate of each one's wall time, for the run's ETA. A
	// later plan adds its stages to the one before (a stage of the same
	// name is replaced). Jobs is how many stages run side by side.
	Plan []Planned
	Jobs int
}

// Planned is one stage of a plan.
type Planned struct {
	Stage string
	// Kind groups the stages that run at one rate per unit of their
	// work ("sft", "rl", "eval"): a display corrects every estimate of a
	// kind by how long the finished stages of that kind took against
	// theirs.
	Kind string
	// Estimate is the stage's wall time on a reference machine, side by
	// side with Jobs − 1 others.
	Estimate time.Duration
}

// Figure is one named number of a step ("val_nll", "reward").
type Figure struct {
	Name  string
	Value float64
}

// Func receives events. Work may emit from several goroutines at once; a
// Func serialises what it needs to. A nil Func drops every event.
type Func func(Event)

// Emit sends e to f, if there is one.
func (f Func) Emit(e Event) {
	if f != nil {
		f(e)
	}
}
