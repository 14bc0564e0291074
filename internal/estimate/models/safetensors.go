package models

// A .safetensors file starts with an 8-byte little-endian header length and
// a JSON header, e.g.
//
//	{"__metadata__": {"format": "pt"},
//	 "model.embed_tokens.weight": {"dtype": "BF16", "shape": [128256, 4096], "data_offsets": [0, 1050673152]}, ...}
//
// Only the header is read; the tensors are never touched.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MaxHeaderBytes bounds a safetensors header (the format's own readers
// refuse headers over 100 MB).
const MaxHeaderBytes = 100 << 20

// Tensor is one entry of a safetensors header.
type Tensor struct {
	Name  string
	DType string
	Shape []int64
	Elems int64
}

// Header is what the safetensors headers of a checkpoint say.
type Header struct {
	Tensors []Tensor
	Params  int64
	// BytesByDType is the bytes of tensor data per dtype ("BF16", "F32", ...).
	BytesByDType map[string]int64
}

var dtypeBytes = map[string]int64{
	"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2,
	"I16": 2, "U16": 2, "I8": 1, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1,
	"F8_E8M0": 1, "F6_E2M3": 1, "F6_E3M2": 1, "F4": 1,
}

// DominantDType is the dtype holding the most bytes ("" for an empty header).
func (h *Header) DominantDType() string {
	best, bestN := "", int64(-1)
	for d, n := range h.BytesByDType {
		if n > bestN || (n == bestN && d < best) {
			best, bestN = d, n
		}
	}
	return best
}

// ReadSafetensors reads the header of a .safetensors file, or of every
// shard named by a model.safetensors.index.json.
func ReadSafetensors(path string) (*Header, error) {
	if filepath.Ext(path) == ".json" {
		return readIndex(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open safetensors: %w", err)
	}
	defer f.Close()
	h, err := ParseSafetensorsHeader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// ParseSafetensorsHeader reads the length prefix and JSON header from r.
func ParseSafetensorsHeader(r io.Reader) (*Header, error) {
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return nil, fmt.Errorf("read safetensors header length: %w", err)
	}
	if n < 2 || n > MaxHeaderBytes {
		return nil, fmt.Errorf("safetensors header length %d out of range (2..%d): not a safetensors file?", n, MaxHeaderBytes)
	}
	// Read what is there rather than allocate n up front: a short or
	// corrupt file claiming a 100 MiB header costs no more than its size.
	buf, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err == nil && uint64(len(buf)) < n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("read safetensors header (%d bytes): %w", n, err)
	}
	return parseHeaderJSON(buf)
}

type rawTensor struct {
	DType   string  `json:"dtype"`
	Shape   []int64 `json:"shape"`
	Offsets []int64 `json:"data_offsets"`
}

func parseHeaderJSON(buf []byte) (*Header, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(buf, &raw); err != nil {
		return nil, fmt.Errorf("parse safetensors header json: %w", err)
	}
	h := &Header{BytesByDType: map[string]int64{}}
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		t, err := parseTensor(name, msg)
		if err != nil {
			return nil, err
		}
		h.Tensors = append(h.Tensors, t)
		h.Params += t.Elems
		h.BytesByDType[t.DType] += t.Elems * dtypeBytes[t.DType]
	}
	sort.Slice(h.Tensors, func(i, j int) bool { return h.Tensors[i].Name < h.Tensors[j].Name })
	return h, nil
}

func parseTensor(name string, msg json.RawMessage) (Tensor, error) {
	var rt rawTensor
	if err := json.Unmarshal(msg, &rt); err != nil {
		return Tensor{}, fmt.Errorf("safetensors tensor %q: %w", name, err)
	}
	if _, ok := dtypeBytes[rt.DType]; !ok {
		return Tensor{}, fmt.Errorf("safetensors tensor %q: unknown dtype %q", name, rt.DType)
	}
	elems := int64(1)
	for _, d := range rt.Shape {
		if d < 0 || (d > 0 && elems > (1<<50)/d) {
			return Tensor{}, fmt.Errorf("safetensors tensor %q: bad shape %v", name, rt.Shape)
		}
		elems *= d
	}
	return Tensor{Name: name, DType: rt.DType, Shape: rt.Shape, Elems: elems}, nil
}

// readIndex reads model.safetensors.index.json and the header of each shard
// it names, which must sit in the same directory.
func readIndex(path string) (*Header, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read safetensors index: %w", err)
	}
	if len(data) > MaxConfigBytes*8 {
		return nil, fmt.Errorf("%s: index larger than %d bytes", path, MaxConfigBytes*8)
	}
	shards, err := parseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	all := &Header{BytesByDType: map[string]int64{}}
	for _, s := range shards {
		h, err := ReadSafetensors(filepath.Join(filepath.Dir(path), s))
		if err != nil {
			return nil, fmt.Errorf("shard of %s: %w", path, err)
		}
		all.Tensors = append(all.Tensors, h.Tensors...)
		all.Params += h.Params
		for d, n := range h.BytesByDType {
			all.BytesByDType[d] += n
		}
	}
	return all, nil
}

// parseIndex returns the shard file names of an index, sorted and unique.
func parseIndex(data []byte) ([]string, error) {
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("parse safetensors index: %w", err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("safetensors index has no weight_map")
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range idx.WeightMap {
		// Base("/") is "/": a separator anywhere is refused outright.
		if f != filepath.Base(f) || strings.ContainsRune(f, '/') || f == "" || f == "." || f == ".." {
			return nil, fmt.Errorf("safetensors index names shard %q outside its directory", f)
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}
