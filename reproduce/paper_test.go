package reproduce

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// figureLike is how the paper's figures are written: a percentage with one
// decimal (91.5). A smaller or differently written number beside the word
// "paper" is one of calibrl's own measurements.
var figureLike = regexp.MustCompile(`\b\d{2}\.\d\b`)

// Every figure printed as the paper's, anywhere in the repository (code,
// docs, committed results), is one that paperSource gives: a line that
// names the paper, or a row of a verdict table, carries no other
// percentage-like figure, and the model names no source gives are absent.
func TestNoUnsourcedPaperFigure(t *testing.T) {
	sourced := map[string]bool{}
	for _, arms := range paperFigures {
		for _, v := range arms {
			sourced[fmt.Sprintf("%.1f", v)] = true
		}
	}
	root := ".."
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root is not %s: %v", root, err)
	}
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".json", ".jsonl", ".html", ".yaml", ".yml", ".py", ".sh", ".mjs", ".txt":
		default:
			return nil
		}
		if strings.HasSuffix(path, "paper_test.go") {
			return nil // this file names what it looks for
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			lower := strings.ToLower(line)
			for _, name := range []string{"gemma-3-4b", "qwen2.5-7b simulator"} {
				if strings.Contains(lower, name) && strings.Contains(lower, "paper") {
					t.Errorf("%s:%d: the paper's model names are not in its summary: %.200s", path, n, line)
				}
			}
			if !strings.Contains(lower, "paper") && !strings.Contains(line, `class="claim`) {
				continue
			}
			for _, f := range figureLike.FindAllString(line, -1) {
				if !sourced[f] {
					t.Errorf("%s:%d: %s beside the paper is not a figure %s gives: %.200s", path, n, f, paperSource, line)
				}
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files: the walk missed the repository", checked)
	}
}

// The verdict's Paper cells: both figures where the source gives them,
// "not reported" for a side it does not, for a task it gives none.
func TestPaperPair(t *testing.T) {
	for _, c := range []struct{ family, better, worse, want string }{
		{"mathchat", ArmCalibrated, ArmStatic, "91.5 > 85.0"},
		{"mathchat", ArmCalibrated, ArmOracle, "91.5 > 89.7"},
		{"mathchat", ArmStatic, ArmBase, "85.0 > not reported"},
		{"docedit", ArmCalibrated, ArmStatic, "not reported"},
	} {
		if got := paperPair(c.family, c.better, c.worse); got != c.want {
			t.Errorf("paperPair(%s, %s, %s) = %q, want %q", c.family, c.better, c.worse, got, c.want)
		}
	}
}
