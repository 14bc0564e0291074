package oomexplain

import (
	"strings"
	"testing"
)

// Sources of testdata/cuda (copied verbatim; only a Markdown "# " comment
// prefix was removed where noted):
//   cuda-oom-*.{txt,log}          torch 2.11 on an H200, captured for this project
//   pre-2.1-allowed.log           pytorch test comment (set_per_process_memory_fraction)
//   pre-2.1-fraction-zero.log     a Chinese blog on memory fractions
//   1.x-cached*.log               pix2pixHD README; AttnGAN report (wrapped)
//   2.1-capacty*.log              GitHub issue traceback; a vLLM deployment note (wrapped)
//   2.x-private-pools.log         an sglang issue; 2.x-wrapped-private-pools.log a devlog (wrapped)
//   2.x-allowed-other-process.log a Jupyter traceback with a memory fraction and another process
//   2.x-nvml-garbage.log          a test fixture holding PyTorch's 2^64-byte NVML value
//   malloc-async.log              a ComfyUI traceback (cudaMallocAsync backend)
//   cublas.log, nccl.log          blog tracebacks

func TestCUDAOOM(t *testing.T) {
	tests := []struct {
		file      string
		kind      Kind
		format    string
		exception string
		req       int64 // bytes, as printed (rounded to the unit's 2 decimals)
		total     int64
		free      int64
		alloc     int64
		unalloc   int64
		verdict   Verdict
	}{
		{"cuda/cuda-oom-fragmentation-message.txt", KindCUDAOOM, "2.2+", "", gb(1.40), gb(139.80), gb(133.47), gb(2.44), gb(3.14), VerdictFragmentation},
		{"cuda/cuda-oom-huge-message.txt", KindCUDAOOM, "2.2+", "", gb(372.53), gb(139.80), gb(136.96), gb(1.93), mb(167), VerdictRequestTooLarge},
		{"cuda/cuda-oom-other-process-holds-gpu.log", KindCUDAOOM, "2.2+", "torch.OutOfMemoryError", gb(60), gb(139.80), gb(27.98), gb(10), 0, VerdictOtherProcesses},
		{"cuda/cuda-oom-uncaught-traceback.log", KindCUDAOOM, "2.2+", "torch.OutOfMemoryError", gb(279.40), gb(139.80), gb(135.56), gb(3.73), mb(1.30), VerdictRequestTooLarge},
		{"cuda/pre-2.1-allowed.log", KindCUDAOOM, "pre-2.1", "RuntimeError", gb(37.25), gb(23.68), gb(15.79), mb(192.29), gb(5.05) - mb(192.29), VerdictRequestTooLarge},
		{"cuda/pre-2.1-fraction-zero.log", KindCUDAOOM, "pre-2.1", "RuntimeError", gb(5.59), gb(11.17), gb(10.91), 0, 0, VerdictMemoryFraction},
		{"cuda/1.x-cached.log", KindCUDAOOM, "pre-2.1", "RuntimeError", mb(247.50), gb(10.92), mb(134.31), gb(10), mb(107.02), VerdictDoesNotFit},
		{"cuda/1.x-cached-wrapped.log", KindCUDAOOM, "pre-2.1", "RuntimeError", mb(160), gb(3.81), mb(55.38), gb(3.08), mb(9.78), VerdictDoesNotFit},
		{"cuda/2.1-capacty.log", KindCUDAOOM, "2.1", "torch.cuda.OutOfMemoryError", gb(1.15), gb(23.69), mb(912.81), gb(21.50), mb(1001.89), VerdictDoesNotFit},
		{"cuda/2.1-capacty-wrapped.log", KindCUDAOOM, "2.1", "torch.cuda.OutOfMemoryError", gb(1.25), gb(15.77), mb(281.12), gb(15.04), mb(4.72), VerdictDoesNotFit},
		{"cuda/2.x-private-pools.log", KindCUDAOOM, "2.2+", "torch.OutOfMemoryError", mb(768), gb(83.05), mb(140.38), gb(21.92), mb(797.79), VerdictOtherProcesses}, // 59.58 GiB held by others: not fragmentation
		{"cuda/2.x-wrapped-private-pools.log", KindCUDAOOM, "2.2+", "torch.OutOfMemoryError", mb(336), gb(31.40), mb(371.12), gb(28.95), mb(138.45), VerdictDoesNotFit},
		{"cuda/2.x-allowed-other-process.log", KindCUDAOOM, "2.2+", "OutOfMemoryError", mb(996), gb(44.43), gb(9.06), gb(17.44), mb(59.88), VerdictMemoryFraction},
		{"cuda/2.x-nvml-garbage.log", KindCUDAOOM, "2.2+", "OutOfMemoryError", gb(2.13), gb(8), gb(6.10), mb(954), 0, VerdictMemoryFraction},
		{"cuda/malloc-async.log", KindCUDAMallocAsync, "cudaMallocAsync", "torch.OutOfMemoryError", gb(10.12), gb(24), 0, gb(4.86), -1, VerdictFragmentation}, // the async pool's cache or other processes: both named
		{"cuda/cublas.log", KindCUBLASAlloc, "cublas", "RuntimeError", -1, -1, -1, -1, -1, VerdictGPUOOM},
		{"cuda/nccl.log", KindNCCLOOM, "nccl", "", -1, -1, -1, -1, -1, VerdictGPUOOM},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			incs := parseFile(t, tc.file)
			if len(incs) != 1 {
				t.Fatalf("got %d incidents, want 1", len(incs))
			}
			inc := incs[0]
			c := inc.CUDA
			if inc.Kind != tc.kind || c.Format != tc.format || c.Exception != tc.exception {
				t.Errorf("kind %s format %q exception %q", inc.Kind, c.Format, c.Exception)
			}
			for _, f := range []struct {
				name string
				got  *int64
				want int64
			}{{"requested", c.RequestedBytes, tc.req}, {"total", c.TotalBytes, tc.total}, {"free", c.FreeBytes, tc.free},
				{"allocated", c.AllocatedBytes, tc.alloc}, {"reserved-unallocated", c.ReservedUnallocatedBytes, tc.unalloc}} {
				if !near(f.got, f.want) {
					t.Errorf("%s = %v, want %d", f.name, deref(f.got), f.want)
				}
			}
			if inc.Explanation.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s: %s", inc.Explanation.Verdict, tc.verdict, inc.Explanation.Summary)
			}
		})
	}
}

func TestCUDAOOMDetails(t *testing.T) {
	other := parseFile(t, "cuda/cuda-oom-other-process-holds-gpu.log")[0]
	ps := other.CUDA.OtherProcesses
	if len(ps) != 2 || ps[1].PID != 443 || !near(&ps[1].Bytes, gb(100.51)) || !near(other.CUDA.ProcessBytes, gb(10.51)) {
		t.Errorf("processes %+v, this process %v", ps, deref(other.CUDA.ProcessBytes))
	}
	if r := strings.Join(other.Explanation.Recommendations, " "); !strings.Contains(r, "pid 443") {
		t.Errorf("recommendations should name pid 443: %s", r)
	}
	frag := parseFile(t, "cuda/cuda-oom-fragmentation-message.txt")[0]
	if !near(frag.CUDA.AllowedBytes, gb(5.59)) || !strings.Contains(strings.Join(frag.Explanation.Recommendations, " "), "expandable_segments:True") {
		t.Errorf("allowed %v, advice %v", deref(frag.CUDA.AllowedBytes), frag.Explanation.Recommendations)
	}
	// 2.1 lists this process among the others; it is recognised as itself.
	self := parseFile(t, "cuda/2.1-capacty.log")[0]
	if !ptrEq(self.CUDA.PID, 454738) || len(self.CUDA.OtherProcesses) != 0 || len(self.PIDs) != 1 {
		t.Errorf("2.1 self: pid %v others %+v", self.CUDA.PID, self.CUDA.OtherProcesses)
	}
	pool := parseFile(t, "cuda/2.x-wrapped-private-pools.log")[0]
	if !near(pool.CUDA.PrivatePoolBytes, mb(22)) {
		t.Errorf("private pool %v", deref(pool.CUDA.PrivatePoolBytes))
	}
	garbage := parseFile(t, "cuda/2.x-nvml-garbage.log")[0]
	if garbage.CUDA.ProcessBytes != nil || len(garbage.CUDA.OtherProcesses) != 0 {
		t.Errorf("2^64-byte NVML values kept: %v %+v", deref(garbage.CUDA.ProcessBytes), garbage.CUDA.OtherProcesses)
	}
	async := parseFile(t, "cuda/malloc-async.log")[0]
	if async.CUDA.AllowedBytes != nil || !ptrEq(async.CUDA.Device, 0) {
		t.Errorf("async: allowed %v (no limit expected) device %v", deref(async.CUDA.AllowedBytes), async.CUDA.Device)
	}
}

// gb and mb turn PyTorch's printed numbers into bytes.
func gb(f float64) int64 { return int64(f * float64(gib)) }
func mb(f float64) int64 { return int64(f * float64(mib)) }

// near: within 0.5% (printed values carry two decimals); -1 means absent.
func near(got *int64, want int64) bool {
	if want < 0 {
		return got == nil
	}
	if got == nil {
		return false
	}
	d := *got - want
	if d < 0 {
		d = -d
	}
	return d <= want/200+1024
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
