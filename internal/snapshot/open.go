package snapshot

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// ReadFile opens path (plain or gzip-compressed, told apart by content)
// and decodes it. progress, if not nil, gets bytes read so far of the file
// on disk and its size.
func ReadFile(path string, progress func(read, total int64)) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if data, ok := mapPickle(f, st); ok {
		defer unmapPickle(data)
		s, err := readMapped(data, progress)
		if err != nil {
			return nil, fmt.Errorf("read snapshot %s: %w", path, err)
		}
		return s, nil
	}
	s, err := readStream(f, st.Size(), progress)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", path, err)
	}
	return s, nil
}

// ReadAny decodes a snapshot from r, gunzipping it when it starts with the
// gzip magic; size is r's length if known, else -1.
func ReadAny(r io.Reader, size int64) (*Snapshot, error) {
	return readStream(r, size, nil)
}

func readStream(r io.Reader, size int64, progress func(read, total int64)) (*Snapshot, error) {
	cr := &countingReader{r: r}
	diskSize := size
	br := bufio.NewReaderSize(cr, 64<<10)
	var src io.Reader = br
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gunzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
		src, size = br, -1
	}
	if err := sniffPickle(br); err != nil {
		return nil, err
	}
	if size < 0 || size > 8<<20 {
		ra := newReadAhead(src, 1<<20, 4)
		defer ra.Close()
		src = ra
	}
	var cb func(int64)
	if progress != nil {
		total := diskSize
		cb = func(int64) { progress(cr.n.Load(), total) }
	}
	return readStored(src, size, cb, func() int64 { return cr.n.Load() })
}

// sniffPickle turns the two commonest wrong inputs into errors that say what
// the file is, before the decoder reports a bare unknown opcode: an empty
// file and a JSON document (memory_stats() or a snapshot converted to JSON).
func sniffPickle(br *bufio.Reader) error {
	first, err := br.Peek(1)
	if len(first) == 0 && err != nil && err != io.EOF {
		return err
	}
	return sniffStart(first)
}

// sniffStart is sniffPickle on the input's first byte (none: empty).
func sniffStart(first []byte) error {
	if len(first) == 0 {
		return fmt.Errorf("empty input: no pickle to read")
	}
	if first[0] == '{' || first[0] == '[' {
		return fmt.Errorf("not a pickle: the input starts with %q like a JSON document; "+
			"torchmem snapshot reads the file torch.cuda.memory._dump_snapshot() writes", first[0])
	}
	return nil
}

// countingReader counts the bytes read of the input as stored; the count
// is atomic because a read-ahead goroutine reads while the decoder asks.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
