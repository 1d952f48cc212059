// Package progress is the typed stream of events that long work emits for
// a display: a reproduce run's stages, the training steps inside them. The
// work says where it is in fields; the command line renders them (a bar
// on a terminal). Nobody formats a display line in the work or parses a
// log line to draw one.
package progress

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
