package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// dialogCorpus generates n conversations in the style of calibrl's embedded
// tasks (math word problems with hidden facts, document edits), rendered as
// plain text, one string each. The same seed gives the same corpus; train
// and held-out sets use different seeds.
func dialogCorpus(seed uint64, n int) []string {
	rng := rand.New(rand.NewPCG(seed, 0x70c))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	names := []string{"Maya", "Tom", "Priya", "Lukas", "Ana", "Kenji", "Fatima", "Oliver", "Zoë", "José"}
	items := []string{"apples", "notebooks", "tickets", "bottles of juice", "pencils", "bags of rice", "plants", "marbles"}
	var out []string
	for range n {
		var b strings.Builder
		name, item := names[rng.IntN(len(names))], items[rng.IntN(len(items))]
		a, c, p := 2+rng.IntN(97), 2+rng.IntN(30), 1+rng.IntN(20)
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&b, "system: You are a helpful assistant. Ask for missing facts before answering.\n")
			fmt.Fprintf(&b, "user: %s buys some %s and then %s more. %s\n", name, item,
				pick("gives a few away", "buys a few more", "sells some"), pick("How many are left?", "what's the total cost?", "Can you help me figure it out?"))
			fmt.Fprintf(&b, "assistant: %s How many %s did %s buy at first, and what does each cost?\n",
				pick("Sure!", "Happy to help.", "Let's work it out."), item, name)
			fmt.Fprintf(&b, "user: %s bought %d %s at $%d.%02d each%s.\n", name, a, item, p, rng.IntN(100),
				pick("", ", i think", " — sorry, forgot to say", ". also they had a 15% discount"))
			fmt.Fprintf(&b, "assistant: Then the total is %d × %d = %d, so the answer is \\boxed{%d}.\n", a, c, a*c, a*c)
			fmt.Fprintf(&b, "user: %s\n", pick("That's right, thanks!", "that doesn't match what I got.", "Hmm, are you sure? I got something else.", "Perfect."))
		} else {
			doc := []string{
				fmt.Sprintf("The %s committee met on %d March to review the budget.", pick("garden", "library", "school", "harbour"), 1+rng.IntN(28)),
				fmt.Sprintf("Members agreed to spend %d%% of the funds on %s.", 5+rng.IntN(60), pick("repairs", "new books", "training", "events")),
				pick("The next meeting will be held in the main hall.", "Minutes were taken by the secretary.", "Questions should be sent by email."),
			}
			fmt.Fprintf(&b, "user: Could you %s this note?\n%s\n", pick("tidy up", "edit", "fix", "improve"), strings.Join(doc, " "))
			fmt.Fprintf(&b, "assistant: %s What would you like changed?\n", pick("Of course.", "Sure.", "Happy to."))
			fmt.Fprintf(&b, "user: %s \"%s\" %s\n", pick("Please replace", "Change", "Swap out"), pick("committee", "budget", "hall", "secretary"),
				pick("with \"board\".", "- use something more formal", "for the word in the title"))
			fmt.Fprintf(&b, "assistant: Here is the revised note:\n\n%s\n", strings.Join(doc, "\n"))
			fmt.Fprintf(&b, "user: %s\n", pick("Looks good.", "Almost, but the date is wrong.", "Thanks! That's exactly it."))
		}
		out = append(out, b.String())
	}
	return out
}

// proseCorpus returns English prose found on the machine (license texts and
// the Go spec), cut in paragraphs, or nil where none is found. It is used
// only by benchmarks that report bytes per token on real text.
func proseCorpus() []string {
	files, _ := filepath.Glob("/usr/share/common-licenses/*")
	files = append(files, filepath.Join(runtime.GOROOT(), "doc", "go_spec.html"), filepath.Join(runtime.GOROOT(), "doc", "go_mem.html"))
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		out = append(out, strings.Split(string(data), "\n\n")...)
	}
	return out
}
