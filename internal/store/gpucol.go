package store

import (
	"encoding/binary"
	"errors"
)

// The per-device GPU series are packed into one small BLOB rather than
// JSON: at 10 Hz the digits of four 40 GB numbers were a third of a row.
//
//	byte 0: format (1)
//	uvarint len(used), uvarint len(job), then one uvarint per value:
//	0 for nil (no reading), v+1 otherwise.
const gpuFormat = 1

func encodeGPU(used, job []*int64) []byte {
	if len(used) == 0 && len(job) == 0 {
		return nil
	}
	b := []byte{gpuFormat}
	b = binary.AppendUvarint(b, uint64(len(used)))
	b = binary.AppendUvarint(b, uint64(len(job)))
	for _, list := range [][]*int64{used, job} {
		for _, v := range list {
			if v == nil || *v < 0 {
				b = binary.AppendUvarint(b, 0)
				continue
			}
			b = binary.AppendUvarint(b, uint64(*v)+1)
		}
	}
	return b
}

var errGPUBlob = errors.New("bad gpu column")

// decodeGPU is the inverse of encodeGPU; the column is bounded by what we
// wrote, but a damaged file must not panic or allocate without bound.
func decodeGPU(b []byte) (used, job []*int64, err error) {
	if len(b) == 0 {
		return nil, nil, nil
	}
	n, b, err := gpuHeader(b)
	if err != nil {
		return nil, nil, err
	}
	out := [2][]*int64{make([]*int64, n[0]), make([]*int64, n[1])}
	for i := range out {
		for j := range out[i] {
			v, k := binary.Uvarint(b)
			if k <= 0 {
				return nil, nil, errGPUBlob
			}
			b = b[k:]
			if v > 0 {
				x := int64(v - 1)
				out[i][j] = &x
			}
		}
	}
	return out[0], out[1], nil
}

// gpuHeader checks the format byte of a non-empty column and reads the two
// list lengths (at most 1024 devices each), returning the values after them.
func gpuHeader(b []byte) (n [2]uint64, rest []byte, err error) {
	if b[0] != gpuFormat {
		return n, nil, errGPUBlob
	}
	b = b[1:]
	for i := range n {
		v, k := binary.Uvarint(b)
		if k <= 0 || v > 1024 {
			return n, nil, errGPUBlob
		}
		n[i], b = v, b[k:]
	}
	return n, b, nil
}
