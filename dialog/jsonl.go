package dialog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode"

	"github.com/calibrl/calibrl/atomicfile"
)

// maxLine bounds one JSONL record; a longer line is reported, not truncated.
const maxLine = 64 << 20

// WriteEpisodes writes episodes as JSON Lines, one episode a line.
func WriteEpisodes(w io.Writer, eps []Episode) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range eps {
		if err := enc.Encode(&eps[i]); err != nil {
			return fmt.Errorf("episode %s: %w", eps[i].ID, err)
		}
	}
	return nil
}

// SaveEpisodes writes episodes to path atomically: on failure nothing is
// left behind.
func SaveEpisodes(path string, eps []Episode) error {
	return atomicfile.Write(path, func(w io.Writer) error { return WriteEpisodes(w, eps) })
}

// ReadEpisodes parses JSON Lines of episodes. name is used in errors, which
// name the line: "logs.jsonl:17: ...". Blank lines are skipped; unknown
// fields are errors, so a file of another kind is not silently misread.
func ReadEpisodes(r io.Reader, name string) ([]Episode, error) {
	var eps []Episode
	err := ScanJSONL(r, name, func(line []byte) error {
		var ep Episode
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ep); err != nil {
			return err
		}
		if dec.More() {
			return errors.New("more than one JSON value on the line")
		}
		if len(ep.Messages) == 0 {
			return errors.New("episode has no messages")
		}
		eps = append(eps, ep)
		return nil
	})
	return eps, err
}

// LoadEpisodes reads an episodes JSONL file.
func LoadEpisodes(path string) ([]Episode, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load episodes: %w", err)
	}
	defer f.Close()
	eps, err := ReadEpisodes(f, path)
	if err != nil {
		return nil, err
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("%s: no episodes", path)
	}
	return eps, nil
}

// ScanJSONL is the line reader every JSONL parser in calibrl shares: it
// calls parse for each non-blank line and names file and line in errors.
func ScanJSONL(r io.Reader, name string, parse func(line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimFunc(sc.Bytes(), unicode.IsSpace)
		if len(line) == 0 {
			continue
		}
		if err := parse(line); err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: line longer than %d bytes", name, n+1, maxLine)
		}
		return fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	return nil
}
