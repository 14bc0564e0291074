package doctor

import "testing"

func FuzzParseAllocConf(f *testing.F) {
	f.Add("expandable_segments:True,roundup_power2_divisions:[256:1,512:2,>:4]")
	f.Add("backend:cudaMallocAsync")
	f.Fuzz(func(t *testing.T, s string) {
		opts, err := parseAllocConf(s)
		if err == nil {
			_ = allocConfFindings("PYTORCH_CUDA_ALLOC_CONF", s, version("2.4.0"))
			for _, kv := range opts {
				_ = badAllocValue(kv[0], kv[1])
			}
		}
	})
}

func FuzzShmMountinfo(f *testing.F) {
	f.Add("25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684096k\n")
	f.Add("1 0 0:1 / /dev/shm rw - tmpfs shm rw,size=50%\n")
	f.Fuzz(func(t *testing.T, s string) {
		if opts, ok := shmMountOptions(s); ok {
			_, _ = shmSize(opts, 1<<34)
		}
	})
}

func FuzzVersion(f *testing.F) {
	f.Add("2.11.0+cu130")
	f.Add("1.13.0a0")
	f.Fuzz(func(t *testing.T, s string) {
		_ = versionLess(version(s), []int{2, 3})
	})
}
