package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// --pipelines takes at least two distinct seeds, names a bad one, and
// bounds the count.
func TestSeedList(t *testing.T) {
	var s seedList
	if err := s.Set("1, 2,3"); err != nil || !slices.Equal(s, seedList{1, 2, 3}) || s.String() != "1,2,3" {
		t.Errorf("1, 2,3: %v %v", s, err)
	}
	many := strings.Repeat("1,", maxPipelines) + "0"
	for in, want := range map[string]string{
		"1":      "at least 2",
		"1,x":    `"x" is not a seed`,
		"1,-2":   `"-2" is not a seed`,
		"3,3":    "seed 3 given twice",
		many:     "given twice",
		"":       "is not a seed",
		"1,2,,3": `"" is not a seed`,
	} {
		if err := s.Set(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", in, err, want)
		}
	}
	var big []string
	for i := range maxPipelines + 1 {
		big = append(big, strconv.Itoa(i))
	}
	if err := s.Set(strings.Join(big, ",")); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("%d seeds: %v", len(big), err)
	}
}
