package docedit

import "strings"

// DocMarker introduces a full document in an agent's message.
const DocMarker = "Revised document:"

// ExtractDocument returns the document a message shows, by this rule:
//
//   - a document starts at a line that begins with DocMarker (after
//     leading spaces; letter case ignored);
//   - it is the rest of that line plus every following line up to the
//     first blank line or the end of the message; lines holding only a
//     code fence ("```" or "```text") are skipped, so a fenced document
//     reads the same;
//   - it is normalised to one line (runs of white space become one space);
//   - a marker with nothing after it shows no document, and when a message
//     has several documents the last one counts.
//
// ok is false when the message shows no document.
func ExtractDocument(msg string) (doc string, ok bool) {
	blocks := documentBlocks(splitLines(msg))
	if len(blocks) == 0 {
		return "", false
	}
	return blocks[len(blocks)-1].doc, true
}

func splitLines(msg string) []string {
	return strings.Split(strings.ReplaceAll(msg, "\r\n", "\n"), "\n")
}

// docBlock is one document a message shows: lines[start:end] hold the
// marker and the document's lines.
type docBlock struct {
	start, end int
	doc        string
}

// documentBlocks finds the documents in a message's lines, in order, by
// ExtractDocument's rule; a marker with nothing after it is no block.
func documentBlocks(lines []string) []docBlock {
	var blocks []docBlock
	for i := 0; i < len(lines); i++ {
		rest, found := cutMarker(lines[i])
		if !found {
			continue
		}
		parts := []string{rest}
		started := strings.TrimSpace(rest) != ""
		j := i + 1
		for ; j < len(lines); j++ {
			l := strings.TrimSpace(lines[j])
			if strings.HasPrefix(l, "```") && !strings.Contains(l[3:], "`") && !strings.Contains(l, " ") {
				continue
			}
			if l == "" {
				if started {
					break
				}
				continue // a blank line right after the marker is not the end
			}
			if _, again := cutMarker(lines[j]); again {
				break
			}
			parts = append(parts, l)
			started = true
		}
		if d := Normalize(strings.Join(parts, " ")); d != "" {
			blocks = append(blocks, docBlock{start: i, end: j, doc: d})
		}
		i = j - 1
	}
	return blocks
}

func cutMarker(line string) (string, bool) {
	l := strings.TrimLeft(line, " \t")
	if len(l) < len(DocMarker) || !strings.EqualFold(l[:len(DocMarker)], DocMarker) {
		return "", false
	}
	return l[len(DocMarker):], true
}
