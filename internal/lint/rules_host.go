package lint

import (
	"github.com/torchmem/torchmem/internal/units"
)

// TM013: a constant num_workers this host cannot hold.

const (
	// tasksPerWorker: a worker is a process plus its result-queue feeder
	// thread; RLIMIT_NPROC counts threads.
	tasksPerWorker = 2
	// shmPerBatch: the smallest shared-memory footprint we assume for one
	// in-flight batch (32 RGB 224x224 float32 images are 19 MiB).
	shmPerBatch = 8 << 20
	// defaultPrefetch is DataLoader's prefetch_factor default.
	defaultPrefetch = 2
)

func checkTM013(f *file) {
	h := f.proj.host
	for _, call := range f.nodes("Call") {
		if !isDataLoader(call) {
			continue
		}
		n, ok := f.resolveInt(numWorkers(call))
		if !ok || n <= 0 {
			continue
		}
		prefetch := defaultPrefetch
		if v, ok := f.resolveInt(kwarg(call, "prefetch_factor")); ok && v > 0 {
			prefetch = v
		}
		if h.MaxProcs != nil && !h.Unlimited && !h.RootUser && uint64(n*tasksPerWorker) > *h.MaxProcs {
			f.report(call, "TM013", "tm013.nproc", n, n*tasksPerWorker, *h.MaxProcs)
		}
		if need := uint64(n) * uint64(prefetch) * shmPerBatch; h.ShmBytes != nil && need > *h.ShmBytes {
			f.report(call, "TM013", "tm013.shm", n, prefetch, n*prefetch, units.Bytes(int64(need)), units.Bytes(int64(*h.ShmBytes)))
		}
	}
}
