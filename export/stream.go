package export

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/dialog"
)

// BatchRows is how many rows go to the Parquet writer at a time. It is a
// multiple of the 64 rows the writer cuts every write into, so a streamed
// file is byte for byte the one a single write of all rows makes.
const BatchRows = 1024

// Source yields episodes one at a time and io.EOF after the last;
// *dialog.EpisodeReader is one.
type Source interface {
	Next() (dialog.Episode, error)
}

// Stats count what an export read and wrote.
type Stats struct {
	Episodes int // episodes read
	Rows     int // rows written
}

// Stream exports the episodes src yields to path as opt says. Each episode
// is converted and written as it is read, so memory does not grow with
// the number of episodes: JSON lines go out at once, Parquet rows in
// batches of BatchRows, with the encoded pages kept in temporary files
// (unlinked at once where the system allows) rather than in memory. The
// file is byte for byte the one Write makes from the same episodes.
//
// Like Write, the file is written atomically: an export that fails, finds
// no rows, or is interrupted by cancelling ctx (checked before each
// episode) leaves no file, partial or temporary. An error of src is
// returned as it is (it names file and line); a cancelled export's error
// wraps ctx.Err().
func Stream(ctx context.Context, path string, src Source, opt Options) (Stats, error) {
	if err := opt.Validate(); err != nil {
		return Stats{}, err
	}
	var (
		st     Stats
		srcErr error
		noRows = errors.New("no rows")
	)
	err := atomicfile.Write(path, func(w io.Writer) error {
		rw := newRowWriter(w, opt)
		defer rw.release()
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			ep, err := src.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				srcErr = err
				return err
			}
			st.Episodes++
			if err := rw.add(&ep); err != nil {
				return err
			}
		}
		if st.Rows = rw.rows(); st.Rows == 0 {
			return noRows
		}
		return rw.close()
	})
	switch {
	case srcErr != nil:
		return Stats{}, srcErr
	case errors.Is(err, noRows):
		return Stats{}, fmt.Errorf("export %s: no rows from %d episodes (kind %s, success only %v)", path, st.Episodes, opt.Kind, opt.SuccessOnly)
	case err != nil:
		return Stats{}, fmt.Errorf("export: %w", err)
	}
	return st, nil
}

// rowWriter converts episodes to rows of one kind and writes them in one
// format.
type rowWriter interface {
	add(ep *dialog.Episode) error
	rows() int
	// close finishes the file.
	close() error
	// release frees temporary storage, whether or not close ran.
	release()
}

func newRowWriter(w io.Writer, opt Options) rowWriter {
	switch opt.Kind {
	case KindSim:
		return newSink(w, opt.Format, func(ep *dialog.Episode, dst []ChatRow) []ChatRow {
			if opt.SuccessOnly && !ep.Success {
				return dst
			}
			return append(dst, simRow(ep))
		})
	case KindPolicy:
		return newSink(w, opt.Format, func(ep *dialog.Episode, dst []ChatRow) []ChatRow {
			return policyRows(ep, opt.SuccessOnly, dst)
		})
	case KindRollouts:
		return newSink(w, opt.Format, func(ep *dialog.Episode, dst []RolloutRow) []RolloutRow {
			return rolloutRows(ep, opt.SuccessOnly, dst)
		})
	default: // KindPrompts; Validate has run
		return newSink(w, opt.Format, func(ep *dialog.Episode, dst []PromptRow) []PromptRow {
			if opt.SuccessOnly && !ep.Success {
				return dst
			}
			return append(dst, promptRow(ep))
		})
	}
}

// sink writes the rows of T that each episode gives: as JSON lines at
// once, or to Parquet BatchRows at a time.
type sink[T any] struct {
	convert func(ep *dialog.Episode, dst []T) []T
	enc     *json.Encoder
	pw      *parquet.GenericWriter[T]
	pages   *spillPool
	batch   []T // Parquet rows not yet written
	cur     []T // the rows of the episode being added
	n       int
}

func newSink[T any](w io.Writer, format string, convert func(*dialog.Episode, []T) []T) *sink[T] {
	s := &sink[T]{convert: convert}
	if format == FormatParquet {
		s.pages = newSpillPool()
		s.pw = parquet.NewGenericWriter[T](w, parquet.Compression(&parquet.Zstd), parquet.ColumnPageBuffers(s.pages))
		s.batch = make([]T, 0, BatchRows)
	} else {
		s.enc = json.NewEncoder(w)
		s.enc.SetEscapeHTML(false)
	}
	return s
}

func (s *sink[T]) add(ep *dialog.Episode) error {
	s.cur = s.convert(ep, s.cur[:0])
	defer clear(s.cur) // hold no episode's text past its rows
	for i := range s.cur {
		if s.enc != nil {
			if err := s.enc.Encode(&s.cur[i]); err != nil {
				return fmt.Errorf("row %d: %w", s.n, err)
			}
			s.n++
			continue
		}
		s.batch = append(s.batch, s.cur[i])
		s.n++
		if len(s.batch) == BatchRows {
			if err := s.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *sink[T]) flush() error {
	if len(s.batch) == 0 {
		return nil
	}
	if _, err := s.pw.Write(s.batch); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	clear(s.batch)
	s.batch = s.batch[:0]
	return nil
}

func (s *sink[T]) rows() int { return s.n }

func (s *sink[T]) close() error {
	if s.pw == nil {
		return nil
	}
	if err := s.flush(); err != nil {
		return err
	}
	if err := s.pw.Close(); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}

func (s *sink[T]) release() {
	if s.pages != nil {
		s.pages.release()
	}
}

// spillPool keeps the Parquet writer's encoded pages in temporary files,
// so that a large export's memory does not grow with its output. Each file
// is unlinked as soon as it is made where the system allows it (a killed
// export leaves nothing behind), otherwise removed when released. Where
// no temporary file can be made the pages stay in memory.
type spillPool struct {
	mem  parquet.BufferPool
	mu   sync.Mutex
	open map[*spillFile]bool
}

func newSpillPool() *spillPool {
	return &spillPool{mem: parquet.NewBufferPool(), open: map[*spillFile]bool{}}
}

func (p *spillPool) GetBuffer() io.ReadWriteSeeker {
	f, err := os.CreateTemp("", "calibrl-export-*.pages")
	if err != nil {
		return p.mem.GetBuffer()
	}
	sf := &spillFile{f: f, w: bufio.NewWriterSize(f, 1<<16)}
	if os.Remove(f.Name()) != nil {
		sf.name = f.Name()
	}
	p.mu.Lock()
	p.open[sf] = true
	p.mu.Unlock()
	return sf
}

func (p *spillPool) PutBuffer(b io.ReadWriteSeeker) {
	sf, ok := b.(*spillFile)
	if !ok {
		p.mem.PutBuffer(b)
		return
	}
	p.mu.Lock()
	delete(p.open, sf)
	p.mu.Unlock()
	sf.discard()
}

// release discards the files the writer still holds.
func (p *spillPool) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for sf := range p.open {
		sf.discard()
		delete(p.open, sf)
	}
}

// spillFile is a page buffer on disk. The writer appends a column's pages
// to it, then seeks to the start and reads them back; writes are buffered.
type spillFile struct {
	f    *os.File
	w    *bufio.Writer
	name string // to remove when discarded; "" once unlinked
}

func (s *spillFile) Write(b []byte) (int, error) { return s.w.Write(b) }

func (s *spillFile) Read(b []byte) (int, error) {
	if err := s.w.Flush(); err != nil {
		return 0, err
	}
	return s.f.Read(b)
}

func (s *spillFile) Seek(offset int64, whence int) (int64, error) {
	if err := s.w.Flush(); err != nil {
		return 0, err
	}
	return s.f.Seek(offset, whence)
}

func (s *spillFile) discard() {
	s.f.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
}
