package oomexplain

import (
	"strings"
	"testing"
)

// Real text from the corpus (testdata/corpus/cuda): the shapes that cost
// a parser fix, each table-tested on its own.

func TestCUDAParsesRealShapes(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		kinds   []Kind
		counts  []int
		alloc   int64 // bytes; -1 when not checked
		unalloc int64
	}{
		{
			name: "rank prefix lost by the terminal wrap, mid-number (cuda/028)",
			text: "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.36 GiB. GPU 1 has a total capacity of 47.50 GiB of which 1.52 GiB is free. Including non-PyTorch memory, this process has 45.97 GiB memory in use. Of the allocated memory 4\n" +
				"0.30 GiB is allocated by PyTorch, and 4.91 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory\n" +
				" Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n" +
				"[rank6]: Traceback (most recent call last):\n",
			kinds: []Kind{KindCUDAOOM}, counts: []int{1}, alloc: gb(40.30), unalloc: gb(4.91),
		},
		{
			name: "a handler's bare report after the raised error is a second failure (cuda/049)",
			text: "RuntimeError: CUDA error: out of memory\n" +
				"CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n" +
				"Interrogate Request!\n" +
				"Unloading interrogator blip2-opt-6.7b\n" +
				"Exception processing item!\n" +
				"Exception string: 'CUDA error: out of memory\n" +
				"CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n",
			kinds: []Kind{KindCUDAError, KindCUDAError}, counts: []int{1, 1}, alloc: -1,
		},
		{
			name: "a chained traceback's repeat stays one failure",
			text: "RuntimeError: CUDA error: out of memory\n" +
				"During handling of the above exception, another exception occurred:\n" +
				"Traceback (most recent call last):\n" +
				"RuntimeError: CUDA error: out of memory\n",
			kinds: []Kind{KindCUDAError}, counts: []int{2}, alloc: -1,
		},
		{
			name:  "THCudaCheck FAIL alone, PyTorch 0.1.9 (cuda/052)",
			text:  "THCudaCheck FAIL file=/data/users/soumith/miniconda2/conda-bld/pytorch-0.1.9_1487346124464/src/torch/lib/THC/generic/THCStorage.cu line=66 error=2 : out of memory\nTraceback (most recent call last):\n",
			kinds: []Kind{KindCUDAError}, counts: []int{1}, alloc: -1,
		},
		{
			name: "THCudaCheck FAIL then its RuntimeError: one failure (cuda/051)",
			text: "THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n" +
				"Traceback (most recent call last):\n" +
				"  File \"main.py\", line 357, in train\n" +
				"    loss.backward()\n" +
				"RuntimeError: cuda runtime error (2) : out of memory at /pytorch/torch/lib/THC/generic/THCStorage.cu:58\n",
			kinds: []Kind{KindCUDAError}, counts: []int{1}, alloc: -1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			incs, err := Parse(strings.NewReader(tc.text), Options{})
			if err != nil {
				t.Fatal(err)
			}
			incs = Group(incs)
			if len(incs) != len(tc.kinds) {
				t.Fatalf("%d incidents %s, want %v", len(incs), kindsOf(incs), tc.kinds)
			}
			for i, inc := range incs {
				if inc.Kind != tc.kinds[i] || inc.Count != tc.counts[i] || inc.CUDA.Format == "" {
					t.Errorf("[%d] %s count %d format %q, want %s count %d", i, inc.Kind, inc.Count, inc.CUDA.Format, tc.kinds[i], tc.counts[i])
				}
			}
			if tc.alloc < 0 {
				return
			}
			c := incs[0].CUDA
			near := func(p *int64, want int64) bool { return p != nil && *p-want < 1<<20 && want-*p < 1<<20 }
			if !near(c.AllocatedBytes, tc.alloc) || !near(c.ReservedUnallocatedBytes, tc.unalloc) {
				t.Errorf("allocated %v unallocated %v, want %d %d", c.AllocatedBytes, c.ReservedUnallocatedBytes, tc.alloc, tc.unalloc)
			}
		})
	}
}
