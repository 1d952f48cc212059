package lm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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

// parseSafetensors decodes a whole safetensors file. It rejects anything
// that is not well-formed F32 data: unknown dtypes, offsets outside the
// data, overlapping or gapped tensors, sizes that disagree with shapes.
// Tensors come back sorted by data offset.
func parseSafetensors(file []byte) ([]namedTensor, map[string]string, error) {
	if len(file) < 8 {
		return nil, nil, errors.New("safetensors: file shorter than its 8-byte header length")
	}
	n := binary.LittleEndian.Uint64(file[:8])
	if n > maxHeader || n > uint64(len(file)-8) {
		return nil, nil, fmt.Errorf("safetensors: header length %d exceeds file (%d bytes)", n, len(file))
	}
	data := file[8+n:]
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(file[8:8+n], &raw); err != nil {
		return nil, nil, fmt.Errorf("safetensors: header: %w", err)
	}
	var meta map[string]string
	var out []namedTensor
	type span struct {
		begin, end int64
		idx        int
	}
	var spans []span
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
			if d < 0 || (d > 0 && elems > int64(len(data))/int64(d)) {
				return nil, nil, fmt.Errorf("safetensors: tensor %s has shape %v larger than the file", name, e.Shape)
			}
			elems *= int64(d)
		}
		b, en := e.DataOffsets[0], e.DataOffsets[1]
		if b < 0 || en < b || en > int64(len(data)) {
			return nil, nil, fmt.Errorf("safetensors: tensor %s has offsets [%d,%d] outside the %d data bytes", name, b, en, len(data))
		}
		if en-b != 4*elems {
			return nil, nil, fmt.Errorf("safetensors: tensor %s has %d bytes for shape %v (want %d)", name, en-b, e.Shape, 4*elems)
		}
		vals := make([]float32, elems)
		for i := range vals {
			vals[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[b+4*int64(i):]))
		}
		spans = append(spans, span{b, en, len(out)})
		out = append(out, namedTensor{name: name, shape: e.Shape, data: vals})
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.begin != b.begin {
			return int(a.begin - b.begin)
		}
		return int(a.end - b.end)
	})
	var at int64
	sorted := make([]namedTensor, 0, len(out))
	for _, s := range spans {
		if s.begin != at {
			return nil, nil, fmt.Errorf("safetensors: tensor %s starts at byte %d, want %d (tensors must tile the data)", out[s.idx].name, s.begin, at)
		}
		at = s.end
		sorted = append(sorted, out[s.idx])
	}
	if at != int64(len(data)) {
		return nil, nil, fmt.Errorf("safetensors: tensors cover %d of %d data bytes", at, len(data))
	}
	return sorted, meta, nil
}

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
