package dialog

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The reader yields what ReadEpisodes reads, one at a time, and fails
// with the same errors naming file and line.
func TestEpisodeReaderMatchesReadEpisodes(t *testing.T) {
	var buf bytes.Buffer
	a, b := sampleEpisode(), sampleEpisode()
	b.ID = "other"
	if err := WriteEpisodes(&buf, []Episode{a, b}); err != nil {
		t.Fatal(err)
	}
	text := "\n" + strings.ReplaceAll(buf.String(), "\n", "\n  \n")
	want, err := ReadEpisodes(strings.NewReader(text), "mem")
	if err != nil {
		t.Fatal(err)
	}
	r := NewEpisodeReader(strings.NewReader(text), "mem")
	var got []Episode
	for {
		ep, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ep)
	}
	if !reflect.DeepEqual(got, want) || r.Episodes() != 2 {
		t.Fatalf("reader gave %d episodes %+v, ReadEpisodes %+v", r.Episodes(), got, want)
	}

	good := strings.TrimSpace(buf.String())
	for _, text := range []string{
		good + "\n\n{\"id\": 3\n",
		good + "\n{\"bogus\":1}\n",
		"{\"id\":\"x\"}\n",
		good + " {}\n",
		good + "\n" + strings.Repeat("x", maxLine+1) + "\n",
	} {
		_, want := ReadEpisodes(strings.NewReader(text), "logs.jsonl")
		r := NewEpisodeReader(strings.NewReader(text), "logs.jsonl")
		var err error
		for err == nil {
			_, err = r.Next()
		}
		if want == nil || err.Error() != want.Error() {
			t.Errorf("reader: %v, ReadEpisodes: %v", err, want)
		}
	}
}

func TestOpenEpisodes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "eps.jsonl")
	if err := SaveEpisodes(path, []Episode{sampleEpisode()}); err != nil {
		t.Fatal(err)
	}
	r, err := OpenEpisodes(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the last episode: got %v, want io.EOF", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	// As LoadEpisodes: an empty file is an error, a missing one too.
	os.WriteFile(path, []byte("\n\n"), 0o644)
	r, _ = OpenEpisodes(path)
	defer r.Close()
	_, err = r.Next()
	_, want := LoadEpisodes(path)
	if err == nil || err.Error() != want.Error() || !strings.Contains(err.Error(), "no episodes") {
		t.Errorf("empty file: got %v, want %v", err, want)
	}
	_, err = OpenEpisodes(filepath.Join(dir, "missing.jsonl"))
	_, want = LoadEpisodes(filepath.Join(dir, "missing.jsonl"))
	if err == nil || err.Error() != want.Error() {
		t.Errorf("missing file: got %v, want %v", err, want)
	}
}
