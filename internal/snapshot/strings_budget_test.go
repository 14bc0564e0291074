package snapshot

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"strings"
	"testing"
)

// TestLargeStringInSmallGzip: a 100 MiB string of zeros gzips to about
// 100 KB; the string budget (64 MiB plus 64 bytes per stored byte) refuses
// it before reading it, naming the offset of the opcode.
func TestLargeStringInSmallGzip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		declared uint64
		data     int
	}{
		{"declared only", 1 << 40, 0},
		{"100 MiB of zeros", 100 << 20, 100 << 20},
	} {
		var raw bytes.Buffer
		raw.Write([]byte{0x80, 4, 0x8d}) // PROTO 4, BINUNICODE8
		binary.Write(&raw, binary.LittleEndian, tc.declared)
		raw.Write(make([]byte, tc.data))
		raw.WriteByte('.')
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(raw.Bytes())
		zw.Close()
		_, err := ReadAny(bytes.NewReader(gz.Bytes()), -1)
		if err == nil || !strings.Contains(err.Error(), "pickle offset 2: BINUNICODE8") || !strings.Contains(err.Error(), "bytes of strings") {
			t.Errorf("%s (%d bytes gzipped): err %v", tc.name, gz.Len(), err)
		}
	}
}
