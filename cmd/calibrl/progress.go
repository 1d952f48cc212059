package main

import (
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress returns a callback drawing a bar on stderr, or nil when stderr
// is not a terminal (logs and CI stay clean).
func progress(label string, total int) func(done, total int) {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
	)
	return func(done, _ int) {
		bar.Set(done)
		if done >= total {
			bar.Finish()
		}
	}
}
