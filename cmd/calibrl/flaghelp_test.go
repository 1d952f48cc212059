package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runTogether finds two usage strings glued into one: a sentence's period
// and a space before a small letter ("they may name none. your own data
// instead of …", serve --data at 8f05f75).
var runTogether = regexp.MustCompile(`[a-z)]\. [a-z]`)

// Every flag's help line of every command says "default" at most once
// (pflag adds "(default X)" itself) and runs no two descriptions
// together (a sentence that ends with a period and a next that starts
// small: two usage strings glued).
func TestFlagHelpReadsOnce(t *testing.T) {
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			n++
			line := c.CommandPath() + " --" + f.Name
			usage := f.Usage
			// The line as --help prints it, with pflag's own default.
			_, shown := pflag.UnquoteUsage(f)
			full := shown
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && f.DefValue != "0" {
				full += " (default " + f.DefValue + ")"
			}
			if strings.Count(strings.ToLower(full), "default") > 1 {
				t.Errorf("%s says default twice: %q", line, full)
			}
			if m := runTogether.FindString(usage); m != "" && !strings.Contains(usage, "e.g. ") && !strings.Contains(usage, "i.e. ") {
				t.Errorf("%s runs two descriptions together at %q: %q", line, m, usage)
			}
		}
		c.LocalFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	if n < 50 {
		t.Fatalf("walked %d flags: the walk missed the commands", n)
	}
}
