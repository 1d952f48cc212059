package docedit

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
)

var slotRe = regexp.MustCompile(`\{([a-z]+?)(2?)\}`)

// generateDoc writes one document of kind with between cfg.MinSentences
// and cfg.MaxSentences sentences and cfg.MinWords..cfg.MaxWords words. It
// keeps the kind's template order, so instructions read first to last.
func generateDoc(kind string, cfg *Config, rng *rand.Rand) (string, error) {
	tpls := kindTemplates[kind]
	if len(tpls) == 0 {
		return "", fmt.Errorf("docedit: unknown document kind %q", kind)
	}
	for attempt := 0; attempt < 100; attempt++ {
		n := cfg.MinSentences + rng.IntN(cfg.MaxSentences-cfg.MinSentences+1)
		idx := rng.Perm(len(tpls))[:n]
		slices.Sort(idx)
		fill := map[string]string{}
		sents := make([]string, n)
		for i, j := range idx {
			sents[i] = fillTemplate(tpls[j], fill, rng)
		}
		doc := JoinSentences(sents)
		if w := wordCount(doc); w >= cfg.MinWords && w <= cfg.MaxWords {
			return doc, nil
		}
	}
	return "", fmt.Errorf("docedit: no %s document of %d–%d sentences has %d–%d words", kind,
		cfg.MinSentences, cfg.MaxSentences, cfg.MinWords, cfg.MaxWords)
}

// fillTemplate fills a template's slots. fill remembers each slot's word
// across a document, so "{name}" names the same person in every sentence
// and "{name2}" someone else.
func fillTemplate(tpl string, fill map[string]string, rng *rand.Rand) string {
	return slotRe.ReplaceAllStringFunc(tpl, func(m string) string {
		sub := slotRe.FindStringSubmatch(m)
		key := sub[1] + sub[2]
		if w, ok := fill[key]; ok {
			return w
		}
		words := slotWords[sub[1]]
		other := fill[sub[1]]
		if sub[2] == "" {
			other = fill[sub[1]+"2"]
		}
		w := words[rng.IntN(len(words))]
		for tries := 0; w == other && tries < 20; tries++ {
			w = words[rng.IntN(len(words))]
		}
		fill[key] = w
		return w
	})
}

// checkTemplates reports a template slot with no word list; run by New so
// a typo in the templates fails loudly instead of printing "{nmae}".
func checkTemplates() error {
	for kind, tpls := range kindTemplates {
		for _, t := range tpls {
			for _, m := range slotRe.FindAllStringSubmatch(t, -1) {
				if len(slotWords[m[1]]) < 2 {
					return fmt.Errorf("docedit: %s template %q: slot {%s} has no word list", kind, t, m[1])
				}
			}
			if strings.Contains(t, `"`) {
				return fmt.Errorf("docedit: %s template %q holds a double quote", kind, t)
			}
		}
	}
	return nil
}
