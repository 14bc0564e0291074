package doctor

import (
	"testing"

	"github.com/torchmem/torchmem/internal/allocconf"
)

func FuzzParseAllocConf(f *testing.F) {
	f.Add("expandable_segments:True,roundup_power2_divisions:[256:1,512:2,>:4]")
	f.Add("backend:cudaMallocAsync")
	f.Fuzz(func(t *testing.T, s string) {
		opts, err := allocconf.Split(s)
		if err == nil {
			_ = allocConfFindings("PYTORCH_CUDA_ALLOC_CONF", s, version("2.4.0"))
			for _, kv := range opts {
				_ = badAllocValue(kv[0], kv[1])
			}
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
