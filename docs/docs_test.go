// Package docs holds calibrl's documentation; its test keeps the README a
// page a newcomer can follow and every link inside the repository.
package docs

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// The README opens with the two commands, in one code block before any
// heading: the main job on the embedded default and the test command, and
// that test command is the one .ci/run runs. It stays a product page
// (under 150 lines); the lab notes live in results/README.md.
func TestReadmeOpensWithTheTwoCommands(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	if n := len(lines); n > 150 {
		t.Errorf("README.md has %d lines, want at most 150 (move detail into docs/ or results/README.md)", n)
	}
	var block []string
	in := false
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "#") && !in {
			break
		}
		if strings.HasPrefix(l, "```") {
			if in {
				break
			}
			in = true
			continue
		}
		if in {
			block = append(block, l)
		}
	}
	if len(block) != 2 || !strings.HasPrefix(block[0], "go run ./cmd/calibrl reproduce ") || !strings.HasPrefix(block[1], "go vet ./... && go test ./...") {
		t.Fatalf("README.md's first code block is %q, want the reproduce command and the test command", block)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "\n"+block[1]+"\n") {
		t.Errorf(".ci/run does not run the README's test command %q", block[1])
	}
}

// Every relative link in the README, docs/, results/README.md and the
// study folders' Markdown pages names a file or folder of the repository, and
// none leaves it.
func TestLinksStayInTheRepository(t *testing.T) {
	pages := []string{"../README.md", "../results/README.md"}
	for _, glob := range []string{"*.md", "../results/*/*.md"} {
		md, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, md...)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		f, err := os.Open(page)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			for _, m := range mdLink.FindAllStringSubmatch(sc.Text(), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					t.Errorf("%s:%d: %s links outside the repository", page, n, target)
					continue
				}
				if strings.HasPrefix(target, "#") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				abs, err := filepath.Abs(filepath.Join(filepath.Dir(page), target))
				if err != nil {
					t.Fatal(err)
				}
				if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s:%d: %s leaves the repository", page, n, m[1])
					continue
				}
				if _, err := os.Stat(abs); err != nil {
					t.Errorf("%s:%d: %s: no such file in the repository", page, n, m[1])
				}
			}
		}
		f.Close()
	}
}

// The Go version docs/scale.md names is the one go.mod requires: a user
// with an older Go cannot build what the page tells them to run.
func TestScaleNamesGoModsGoVersion(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	page, err := os.ReadFile("scale.md")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`Go (\d+\.\d+(?:\.\d+)?) or later`).FindAllSubmatch(page, -1)
	if len(named) == 0 {
		t.Fatal("scale.md names no Go version (want \"Go X or later\")")
	}
	for _, n := range named {
		if string(n[1]) != string(m[1]) {
			t.Errorf("scale.md names Go %s, go.mod requires %s", n[1], m[1])
		}
	}
}

// Every file a Python snippet of docs/openenv.md opens is written by a
// command on the same page (an --out of a calibrl command before it).
func TestOpenEnvPageWritesWhatItReads(t *testing.T) {
	page, err := os.ReadFile("openenv.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	for _, m := range regexp.MustCompile(`open\("([^"]+)"\)`).FindAllStringSubmatchIndex(text, -1) {
		file := text[m[2]:m[3]]
		if !strings.Contains(text[:m[0]], "--out "+file) {
			t.Errorf("openenv.md reads %s, which no command before it writes (--out %s)", file, file)
		}
	}
}
