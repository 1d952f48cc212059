package lm

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// The safetensors format (https://huggingface.co/docs/safetensors): an
// 8-byte little-endian header length n, n bytes of JSON mapping each tensor
// name to {dtype, shape, data_offsets:[begin,end]} (offsets into the data
// that follows) plus an optional "__metadata__" string map, then the raw
// little-endian data. Only F32 is written or read here.

// namedTensor is one tensor to write or one that was read.
type namedTensor struct {
	name  string
	shape []int
	data  []float32
}

type stHeaderEntry struct {
	Dtype       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// writeSafetensors writes tensors in the given order with metadata.
func writeSafetensors(w io.Writer, tensors []namedTensor, meta map[string]string) error {
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	if len(meta) > 0 {
		mj, err := json.Marshal(meta)
		if err != nil {
			return err
		}
		hdr.WriteString(`"__metadata__":`)
		hdr.Write(mj)
	}
	var off int64
	for i, t := range tensors {
		if i > 0 || len(meta) > 0 {
			hdr.WriteByte(',')
		}
		name, _ := json.Marshal(t.name)
		e, _ := json.Marshal(stHeaderEntry{Dtype: "F32", Shape: t.shape, DataOffsets: [2]int64{off, off + 4*int64(len(t.data))}})
		hdr.Write(name)
		hdr.WriteByte(':')
		hdr.Write(e)
		off += 4 * int64(len(t.data))
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 { // align the data, as the reference writer does
		hdr.WriteByte(' ')
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(hdr.Len()))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for _, t := range tensors {
		for _, v := range t.data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err := w.Write(buf)
	return err
}

// maxHeader bounds the JSON header a reader accepts (the reference
// implementation uses 100 MB).
const maxHeader = 100 << 20

// stEntry is one tensor of a parsed header: where its bytes lie in the
// data that follows the header.
type stEntry struct {
	name       string
	shape      []int
	begin, end int64
}

// parseHeader decodes a safetensors JSON header for dataLen bytes of data.
// It rejects anything that is not well-formed F32 data: unknown dtypes,
// offsets outside the data, overlapping or gapped tensors, sizes that
// disagree with shapes. Entries come back sorted by data offset. Nothing
// is allocated in proportion to the shapes, so a header that claims huge
// tensors costs nothing to refuse.
func parseHeader(hdr []byte, dataLen int64) ([]stEntry, map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, nil, fmt.Errorf("safetensors: header: %w", err)
	}
	var meta map[string]string
	var out []stEntry
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &meta); err != nil {
				return nil, nil, fmt.Errorf("safetensors: __metadata__: %w", err)
			}
			continue
		}
		var e stHeaderEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %s: %w", name, err)
		}
		if e.Dtype != "F32" {
			return nil, nil, fmt.Errorf("safetensors: tensor %s has dtype %q, want F32", name, e.Dtype)
		}
		elems := int64(1)
		for _, d := range e.Shape {
			if d < 0 || (d > 0 && elems > dataLen/int64(d)) {
				return nil, nil, fmt.Errorf("safetensors: tensor %s has shape %v larger than the file", name, e.Shape)
			}
			elems *= int64(d)
		}
		b, en := e.DataOffsets[0], e.DataOffsets[1]
		if b < 0 || en < b || en > dataLen {
			return nil, nil, fmt.Errorf("safetensors: tensor %s has offsets [%d,%d] outside the %d data bytes", name, b, en, dataLen)
		}
		if en-b != 4*elems {
			return nil, nil, fmt.Errorf("safetensors: tensor %s has %d bytes for shape %v (want %d)", name, en-b, e.Shape, 4*elems)
		}
		out = append(out, stEntry{name: name, shape: e.Shape, begin: b, end: en})
	}
	slices.SortFunc(out, func(a, b stEntry) int {
		if a.begin != b.begin {
			return cmp.Compare(a.begin, b.begin)
		}
		return cmp.Compare(a.end, b.end)
	})
	var at int64
	for _, e := range out {
		if e.begin != at {
			return nil, nil, fmt.Errorf("safetensors: tensor %s starts at byte %d, want %d (tensors must tile the data)", e.name, e.begin, at)
		}
		at = e.end
	}
	if at != dataLen {
		return nil, nil, fmt.Errorf("safetensors: tensors cover %d of %d data bytes", at, dataLen)
	}
	return out, meta, nil
}

// parseSafetensors decodes a whole safetensors file held in memory (see
// parseHeader for what it rejects). Tensors come back sorted by data offset.
func parseSafetensors(file []byte) ([]namedTensor, map[string]string, error) {
	if len(file) < 8 {
		return nil, nil, errors.New("safetensors: file shorter than its 8-byte header length")
	}
	n := binary.LittleEndian.Uint64(file[:8])
	if n > maxHeader || n > uint64(len(file)-8) {
		return nil, nil, fmt.Errorf("safetensors: header length %d exceeds file (%d bytes)", n, len(file))
	}
	data := file[8+n:]
	entries, meta, err := parseHeader(file[8:8+n], int64(len(data)))
	if err != nil {
		return nil, nil, err
	}
	out := make([]namedTensor, len(entries))
	for i, e := range entries {
		vals := make([]float32, (e.end-e.begin)/4)
		for j := range vals {
			vals[j] = math.Float32frombits(binary.LittleEndian.Uint32(data[e.begin+4*int64(j):]))
		}
		out[i] = namedTensor{name: e.name, shape: e.shape, data: vals}
	}
	return out, meta, nil
}

// tensorFile is a safetensors file opened for streaming: the header is
// parsed, the data not yet read. Every byte read goes through a SHA-256,
// so the caller can compare the file with a checkpoint manifest.
type tensorFile struct {
	f       *os.File
	r       *bufio.Reader
	hash    hash.Hash
	size    int64
	entries []stEntry
	meta    map[string]string
}

// openTensors opens path and parses its header. The file must be exactly
// header plus the data the header describes.
func openTensors(path string) (*tensorFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	tf := &tensorFile{f: f, hash: sha256.New(), size: st.Size()}
	tf.r = bufio.NewReaderSize(io.TeeReader(f, tf.hash), 1<<16)
	fail := func(err error) (*tensorFile, error) {
		f.Close()
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	var nb [8]byte
	if _, err := io.ReadFull(tf.r, nb[:]); err != nil {
		return fail(errors.New("safetensors: file shorter than its 8-byte header length"))
	}
	n := binary.LittleEndian.Uint64(nb[:])
	if n > maxHeader || n > uint64(tf.size-8) {
		return fail(fmt.Errorf("safetensors: header length %d exceeds file (%d bytes)", n, tf.size))
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(tf.r, hdr); err != nil {
		return fail(fmt.Errorf("safetensors: header: %w", err))
	}
	if tf.entries, tf.meta, err = parseHeader(hdr, tf.size-8-int64(n)); err != nil {
		return fail(err)
	}
	return tf, nil
}

// read fills each tensor, in file order, into the slice dst returns for
// its name (which the caller has checked exists and has the tensor's
// size), then checks that the file ends there. It returns the file's
// SHA-256 and the first tensor holding a NaN or an infinity.
func (tf *tensorFile) read(dst func(name string) []float32) (sum string, err error) {
	buf := make([]byte, 1<<16)
	var bad error
	for _, e := range tf.entries {
		out := dst(e.name)
		nonFinite, first := 0, -1
		for done := 0; done < len(out); {
			k := min(len(out)-done, len(buf)/4)
			if _, err := io.ReadFull(tf.r, buf[:4*k]); err != nil {
				return "", fmt.Errorf("safetensors: tensor %s: %w", e.name, err)
			}
			for j := range k {
				v := math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
				out[done+j] = v
				if v-v != 0 { // NaN or ±Inf
					if nonFinite == 0 {
						first = done + j
					}
					nonFinite++
				}
			}
			done += k
		}
		if nonFinite > 0 && bad == nil {
			bad = fmt.Errorf("tensor %s holds %d non-finite values (the first, %v, at index %d)", e.name, nonFinite, out[first], first)
		}
	}
	if n, _ := io.Copy(io.Discard, tf.r); n != 0 {
		return "", fmt.Errorf("safetensors: %d bytes after the data", n)
	}
	return hex.EncodeToString(tf.hash.Sum(nil)), bad
}

func (tf *tensorFile) Close() error { return tf.f.Close() }

func shapeString(s []int) string {
	b := []byte{'['}
	for i, d := range s {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(d), 10)
	}
	return string(append(b, ']'))
}
