package shm

// The /dev/shm line of /proc/self/mountinfo (the last one wins: it is the
// mount on top), whose super options carry tmpfs's configured size:
//
//	30 24 0:26 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,seclabel,size=65536k
//	25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=50%

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/units"
)

// Thresholds of a /dev/shm size, shared by doctor's dev.shm check and
// tune's advice so that both judge the same size the same way.
const (
	// tooSmallBytes: Docker's 64 MB default is the classic "bus error".
	tooSmallBytes = 1 << 30
	// smallBytes, or a quarter of RAM when that is less.
	smallBytes = 8 << 30
)

// Mount is /dev/shm's mount as mountinfo gives it.
type Mount struct {
	// Mounted is false when mountinfo has no /dev/shm line.
	Mounted bool
	// Options are the super options ("rw,size=65536k").
	Options string
	// SizeBytes is the configured size: size= in bytes or in % of RAM,
	// else tmpfs's default of half of RAM.
	SizeBytes int64
	// How says which of those SizeBytes is ("size option", "50% of RAM").
	How string
}

// ReadMount reads /dev/shm's mount from <procRoot>/self/mountinfo;
// memTotal (bytes, 0 when unknown) sizes a size given in % of RAM.
func ReadMount(procRoot string, memTotal uint64) (Mount, error) {
	path := filepath.Join(procRoot, "self", "mountinfo")
	b, err := os.ReadFile(path)
	if err != nil {
		return Mount{}, fmt.Errorf("read %s: %w", path, err)
	}
	return ParseMount(string(b), memTotal), nil
}

// ParseMount reads /dev/shm's mount from mountinfo text.
func ParseMount(mountinfo string, memTotal uint64) Mount {
	opts, found := mountOptions(mountinfo)
	if !found {
		return Mount{}
	}
	size, how := configuredSize(opts, memTotal)
	return Mount{Mounted: true, Options: opts, SizeBytes: size, How: how}
}

// mountOptions returns the super options of the last /dev/shm mount.
func mountOptions(mountinfo string) (string, bool) {
	opts, found := "", false
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || f[4] != "/dev/shm" {
			continue
		}
		for i, x := range f {
			if x == "-" && i+3 < len(f) {
				opts, found = f[i+3], true
			}
		}
	}
	return opts, found
}

// configuredSize reads size= from tmpfs options ("size=65536k",
// "size=50%"); no size means the tmpfs default, half of RAM.
func configuredSize(opts string, memTotal uint64) (int64, string) {
	for _, o := range strings.Split(opts, ",") {
		v, ok := strings.CutPrefix(o, "size=")
		if !ok {
			continue
		}
		if p, ok := strings.CutSuffix(v, "%"); ok {
			pct, _ := strconv.ParseFloat(p, 64)
			return int64(pct / 100 * float64(memTotal)), v + " of RAM"
		}
		if n, err := units.ParseBytes(v); err == nil {
			return n, "size option"
		}
	}
	return int64(memTotal / 2), "tmpfs default: half of RAM"
}

// Level is how a /dev/shm size fares for DataLoader workers.
type Level int

// Levels of Judge.
const (
	Enough   Level = iota // 8 GiB, or a quarter of RAM, or more
	Small                 // under that: many workers x prefetch can fill it
	TooSmall              // under 1 GiB, or not mounted
)

// Judge rates a mount against memTotal (bytes, 0 when unknown).
func (m Mount) Judge(memTotal uint64) Level {
	small := int64(smallBytes)
	if q := int64(memTotal / 4); q > 0 && q < small {
		small = q
	}
	switch {
	case !m.Mounted:
		return TooSmall
	case m.SizeBytes >= small:
		return Enough
	case m.SizeBytes < tooSmallBytes:
		return TooSmall
	}
	return Small
}

// Title says the size in a line: "/dev/shm is 64.00 MiB", or "/dev/shm is
// not mounted".
func (m Mount) Title() string {
	if !m.Mounted {
		return "/dev/shm is not mounted"
	}
	return "/dev/shm is " + units.Bytes(m.SizeBytes)
}
