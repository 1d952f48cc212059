// Package hashsplit assigns a task's texts (a problem, a target document)
// to the train or the test split by their hash, so that the two splits can
// never hold the same text, whatever generator or data set produced it.
package hashsplit

import "hash/fnv"

// Of returns the split of text, "train" or "test": one bit of its 64-bit
// FNV-1a hash. The bit is fixed forever: changing it would move instances
// between the splits and mix held-out problems into training.
func Of(text string) string {
	h := fnv.New64a()
	h.Write([]byte(text))
	if h.Sum64()&1 == 0 {
		return "train"
	}
	return "test"
}
