package snapshot

import (
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"

	"golang.org/x/sys/unix"

	"github.com/torchmem/torchmem/internal/pickle"
)

// A large plain snapshot file is decoded in place from a read-only memory
// mapping instead of through read(2) and the read-ahead goroutine: the
// kernel copies nothing, nor does the decoder (on a 338 MB file that was
// about a tenth of the CPU time summary takes). The pages already decoded
// are dropped from the mapping every mapDrop bytes, so they stay in the
// page cache but out of this process's resident memory.
const (
	mapMin  = 8 << 20 // smaller files: read, as before
	mapDrop = 4 << 20 // a multiple of the page size
)

// mapPickle maps f when it is a regular file of at least mapMin bytes that
// is not gzip-compressed; false when it is not, or cannot be mapped (the
// caller reads it instead).
func mapPickle(f *os.File, st fs.FileInfo) ([]byte, bool) {
	size := st.Size()
	if !st.Mode().IsRegular() || size < mapMin || int64(int(size)) != size {
		return nil, false
	}
	var magic [2]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil || magic == [2]byte{0x1f, 0x8b} {
		return nil, false
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, false
	}
	// Read ahead of the decoder as read(2) would: a file not in the page
	// cache is then not read a fault at a time.
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL)
	return data, true
}

func unmapPickle(data []byte) { _ = unix.Munmap(data) }

// readMapped decodes a mapped snapshot. A file cut shorter while it is
// read makes the next access to a page past its end fault: that becomes
// an error here, not a crash.
func readMapped(data []byte, progress func(read, total int64)) (s *Snapshot, err error) {
	if err := sniffStart(data[:min(len(data), 1)]); err != nil {
		return nil, err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			s, err = nil, fmt.Errorf("the file was cut while it was read (%v)", r)
		}
	}()
	total, dropped := int64(len(data)), int64(0)
	cb := func(read int64) {
		if end := read &^ (mapDrop - 1); end > dropped {
			_ = unix.Madvise(data[dropped:end], unix.MADV_DONTNEED)
			dropped = end
		}
		if progress != nil {
			progress(read, total)
		}
	}
	b := newBuilder()
	b.size = total
	return b.read(pickle.NewBytesDecoder(data, pickle.Options{Hooks: b, Progress: cb}))
}
