package dialog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/infile"
)

// maxLine bounds one JSONL record; a longer line is reported, not truncated.
const maxLine = 64 << 20

// MaxMessageBytes bounds one message of a log (1 MiB). Training renders and
// tokenizes a message whole before cutting a sequence to the model's
// context, at several times its size (measured: three 20 MB user turns
// took train-sim to 566 MB): a message this long is no dialogue turn, and
// is refused with its file, line and index rather than exhausting memory.
// Every model context holds far less than a mebibyte of text.
const MaxMessageBytes = 1 << 20

// checkMessageSize reports a message longer than MaxMessageBytes; field
// names it in the error ("messages[3].content").
func checkMessageSize(field string, content string) error {
	if len(content) > MaxMessageBytes {
		return fmt.Errorf("%s: %d bytes, the limit is %d (a message this long is no dialogue turn)", field, len(content), MaxMessageBytes)
	}
	return nil
}

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
		ep, err := parseEpisode(line)
		if err != nil {
			return err
		}
		eps = append(eps, ep)
		return nil
	})
	return eps, err
}

// parseEpisode reads one JSONL record of an episode and checks it
// (Episode.Check): errors name the field.
func parseEpisode(line []byte) (Episode, error) {
	var ep Episode
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ep); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Episode{}, fieldErr(te.Field, "want %s, got JSON %s", te.Type, te.Value)
		}
		return Episode{}, err
	}
	if dec.More() {
		return Episode{}, errors.New("more than one JSON value on the line")
	}
	if err := checkPresent(line); err != nil {
		return Episode{}, err
	}
	for i, m := range ep.Messages {
		if err := checkMessageSize(fmt.Sprintf("messages[%d].content", i), m.Content); err != nil {
			return Episode{}, err
		}
	}
	if err := ep.Check(); err != nil {
		return Episode{}, err
	}
	if check := recordedTaskCheck(); check != nil {
		if err := check(ep.Task); err != nil {
			return Episode{}, fieldErr("task", "%v", err)
		}
	}
	return ep, nil
}

// taskCheck is how the task package checks a recorded task name (see
// SetTaskCheck); nil until it registers, as it does when linked in.
var taskCheck struct {
	sync.Mutex
	f func(string) error
}

// SetTaskCheck makes f the check every reader of episode logs applies to
// an episode's task, as the human-log reader does: a name it refuses (an
// unknown task, data named by a path rather than its hash) stops the read
// at its file and line, field "task". The task package registers its
// check (task.CheckRecorded) when it is linked in: dialog cannot import
// it, since tasks build dialog's types.
func SetTaskCheck(f func(string) error) {
	taskCheck.Lock()
	defer taskCheck.Unlock()
	taskCheck.f = f
}

func recordedTaskCheck() func(string) error {
	taskCheck.Lock()
	defer taskCheck.Unlock()
	return taskCheck.f
}

// LoadEpisodes reads an episodes JSONL file.
func LoadEpisodes(path string) ([]Episode, error) {
	f, err := infile.Open(nil, path)
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

// EpisodeReader reads episodes from JSON Lines one at a time, so that a
// file of any size is read in memory bounded by its longest line. Errors
// are those of ReadEpisodes and LoadEpisodes, naming file and line.
type EpisodeReader struct {
	lines  *jsonlLines
	closer io.Closer
	n      int
}

// NewEpisodeReader reads the episodes of r; name is used in errors.
func NewEpisodeReader(r io.Reader, name string) *EpisodeReader {
	return &EpisodeReader{lines: newJSONLLines(r, name)}
}

// OpenEpisodes opens an episodes JSONL file for reading one episode at a
// time. Close it when done.
func OpenEpisodes(path string) (*EpisodeReader, error) {
	f, err := infile.Open(nil, path)
	if err != nil {
		return nil, fmt.Errorf("load episodes: %w", err)
	}
	r := NewEpisodeReader(f, path)
	r.closer = f
	return r, nil
}

// Next returns the next episode, or io.EOF after the last. Like
// LoadEpisodes, input without any episode is an error ("name: no
// episodes"), not an immediate io.EOF.
func (r *EpisodeReader) Next() (Episode, error) {
	line, err := r.lines.next()
	if err == io.EOF {
		if r.n == 0 {
			return Episode{}, fmt.Errorf("%s: no episodes", r.lines.name)
		}
		return Episode{}, io.EOF
	}
	if err != nil {
		return Episode{}, err
	}
	ep, err := parseEpisode(line)
	if err != nil {
		return Episode{}, r.lines.errorf(err)
	}
	r.n++
	return ep, nil
}

// Episodes is the number of episodes read so far.
func (r *EpisodeReader) Episodes() int { return r.n }

// Close closes the file OpenEpisodes opened; for a NewEpisodeReader it
// does nothing.
func (r *EpisodeReader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// ScanJSONL is the line reader every JSONL parser in calibrl shares: it
// calls parse for each non-blank line and names file and line in errors.
func ScanJSONL(r io.Reader, name string, parse func(line []byte) error) error {
	lines := newJSONLLines(r, name)
	for {
		line, err := lines.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := parse(line); err != nil {
			return lines.errorf(err)
		}
	}
}

// jsonlLines yields the non-blank lines of JSON Lines input, trimmed.
type jsonlLines struct {
	sc   *bufio.Scanner
	name string
	n    int // lines read
}

func newJSONLLines(r io.Reader, name string) *jsonlLines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	return &jsonlLines{sc: sc, name: name}
}

// next returns the next non-blank line, valid until the following call,
// or io.EOF at the end; a read error names file and line.
func (l *jsonlLines) next() ([]byte, error) {
	for l.sc.Scan() {
		l.n++
		line := bytes.TrimFunc(l.sc.Bytes(), unicode.IsSpace)
		if len(line) > 0 {
			return line, nil
		}
	}
	if err := l.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: line longer than %d bytes", l.name, l.n+1, maxLine)
		}
		return nil, fmt.Errorf("%s:%d: %w", l.name, l.n+1, err)
	}
	return nil, io.EOF
}

// errorf names the file and the line last returned in err.
func (l *jsonlLines) errorf(err error) error {
	return fmt.Errorf("%s:%d: %w", l.name, l.n, err)
}
