package oomexplain

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// size matches PyTorch's format_size output ("0 bytes", "896.00 KiB", "1.40 GiB").
const size = `([0-9]+(?:\.[0-9]+)?) ?(bytes|B|KiB|MiB|GiB|TiB|PiB|KB|MB|GB|TB)`

var (
	reTried        = regexp.MustCompile(`Tried to allocate ` + size)
	reGPUOld       = regexp.MustCompile(`\(GPU (\d+);`)
	reTotalOld     = newSizeFirst(" total capacity", "")
	reAllocOld     = newSizeFirst(" already allocated", "")
	reFreeOld      = newSizeFirst(" free", "[;)]")
	reAllowed      = newSizeFirst(" allowed;", "")
	reReservedOld  = newSizeFirst(" reserved in total by PyTorch", "")
	reCachedOld    = newSizeFirst(" cached)", "")
	reNewHead      = regexp.MustCompile(`GPU ?(\d*) has a total capac(i?)ty of ` + size + ` of which ` + size + ` is free`)
	reProcess      = regexp.MustCompile(`Process (\d+) has ` + size + ` memory in use`)
	reThisProcess  = clauseRe{regexp.MustCompile(`[Tt]his process has ` + size + ` memory in use`), "his process has ", 1}
	reAllocNew     = regexp.MustCompile(`Of the allocated memory ` + size + ` is allocated by PyTorch`)
	rePrivatePool  = regexp.MustCompile(`with ` + size + ` allocated in private pools`)
	reUnallocNew   = newSizeFirst(" is reserved by PyTorch but unallocated", "")
	reAsyncDevice  = regexp.MustCompile(`Allocation on device (\d+) would exceed`)
	reAsyncField   = regexp.MustCompile(`(?m)^\s*(Currently allocated|Requested|Device limit|Free \(according to CUDA\)|)\s*: ` + size)
	reExceptionPre = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception)):\s*$`)
)

// maxMessage bounds the message kept in an incident.
const maxMessage = 4096

// parseCUDAMessage extracts the numbers from a gathered GPU OOM message.
func parseCUDAMessage(kind Kind, s string) *CUDAOOM {
	c := &CUDAOOM{}
	if kind != KindCUDAMallocAsync {
		s = collapseSpace(s)
	}
	msgStart := cudaMessageStart(kind, s)
	c.Exception = exceptionBefore(s[:msgStart])
	c.Message = s[msgStart:]
	if len(c.Message) > maxMessage {
		c.Message = c.Message[:maxMessage]
	}
	switch kind {
	case KindCUDAOOM:
		parseCachingAllocator(c, c.Message)
	case KindCUDAMallocAsync:
		c.Format = "cudaMallocAsync"
		parseMallocAsync(c, c.Message)
	case KindCUDAError:
		c.Format = "cuda-error"
	case KindCUBLASAlloc:
		c.Format = "cublas"
	case KindNCCLOOM:
		c.Format = "nccl"
	}
	return c
}

func cudaMessageStart(kind Kind, s string) int {
	for _, m := range []string{"CUDA out of memory", "HIP out of memory", "Tried to allocate", "Allocation on device", "CUDA error: out of memory", "cuda runtime error", "CUDA error: CUBLAS", "CUBLAS_STATUS_ALLOC_FAILED", "THCudaCheck FAIL"} {
		if i := strings.Index(s, m); i >= 0 {
			return i
		}
	}
	if i := strings.Index(s, "Cuda failure"); i >= 0 && kind == KindNCCLOOM {
		return i
	}
	return 0
}

// exceptionBefore finds the exception class before the message
// ("torch.OutOfMemoryError: ", "RuntimeError: ").
func exceptionBefore(s string) string {
	if m := reExceptionPre.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

func parseCachingAllocator(c *CUDAOOM, s string) {
	c.RequestedBytes = sizeOf(reTried.FindStringSubmatch(s), 1)
	c.AllowedBytes = sizeOf(reAllowed.find(s), 1)
	if m := reNewHead.FindStringSubmatch(s); m != nil {
		c.Format = "2.2+"
		if m[2] == "" {
			c.Format = "2.1"
		}
		c.Device = atoiPtr(m[1])
		c.TotalBytes, c.FreeBytes = sizeOf(m, 3), sizeOf(m, 5)
		parseNewBreakdown(c, s)
		dropImpossible(c)
		findSelf(c)
		return
	}
	c.Format = "pre-2.1"
	if m := reGPUOld.FindStringSubmatch(s); m != nil {
		c.Device = atoiPtr(m[1])
	}
	c.TotalBytes = sizeOf(reTotalOld.find(s), 1)
	c.AllocatedBytes = sizeOf(reAllocOld.find(s), 1)
	c.FreeBytes = sizeOf(reFreeOld.find(s), 1)
	c.ReservedBytes = sizeOf(reReservedOld.find(s), 1)
	if c.ReservedBytes != nil && c.AllocatedBytes != nil {
		c.ReservedUnallocatedBytes = i64Ptr(max(0, *c.ReservedBytes-*c.AllocatedBytes))
	}
	// 1.0-1.3 printed "X cached)": the cached but unallocated part.
	if cached := sizeOf(reCachedOld.find(s), 1); cached != nil && c.ReservedBytes == nil {
		c.ReservedUnallocatedBytes = cached
		if c.AllocatedBytes != nil {
			c.ReservedBytes = i64Ptr(*c.AllocatedBytes + *cached)
		}
	}
}

// parseNewBreakdown reads the 2.1+ clauses. "Of the allocated memory X is
// allocated by PyTorch" includes private pools; reserved = X + unallocated.
func parseNewBreakdown(c *CUDAOOM, s string) {
	for _, m := range reProcess.FindAllStringSubmatch(s, 64) {
		if pid, b := atoiPtr(m[1]), sizeOf(m, 2); pid != nil && b != nil {
			c.OtherProcesses = append(c.OtherProcesses, GPUProcess{PID: *pid, Bytes: *b})
		}
	}
	c.ProcessBytes = sizeOf(reThisProcess.find(s), 1)
	c.AllocatedBytes = sizeOf(reAllocNew.FindStringSubmatch(s), 1)
	c.PrivatePoolBytes = sizeOf(rePrivatePool.FindStringSubmatch(s), 1)
	c.ReservedUnallocatedBytes = sizeOf(reUnallocNew.find(s), 1)
	if c.AllocatedBytes != nil && c.ReservedUnallocatedBytes != nil {
		c.ReservedBytes = i64Ptr(*c.AllocatedBytes + *c.ReservedUnallocatedBytes)
	}
}

func parseMallocAsync(c *CUDAOOM, s string) {
	if m := reAsyncDevice.FindStringSubmatch(s); m != nil {
		c.Device = atoiPtr(m[1])
	}
	for _, m := range reAsyncField.FindAllStringSubmatch(s, 8) {
		v := sizeOf(m, 2)
		switch m[1] {
		case "Currently allocated":
			c.AllocatedBytes = v
		case "Requested":
			c.RequestedBytes = v
		case "Device limit":
			c.TotalBytes = v
		case "Free (according to CUDA)":
			c.FreeBytes = v
		case "":
			// "PyTorch limit" value; UINT64_MAX bytes means no limit.
			if v != nil && *v < math.MaxInt64/2 {
				c.AllowedBytes = v
			}
		}
	}
}

var unitBytes = map[string]float64{
	"bytes": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50,
	"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
}

// sizeOf converts match groups i (number) and i+1 (unit) to bytes.
func sizeOf(m []string, i int) *int64 {
	if m == nil || i+1 >= len(m) {
		return nil
	}
	f, err := strconv.ParseFloat(m[i], 64)
	mult, ok := unitBytes[m[i+1]]
	if err != nil || !ok {
		return nil
	}
	v := f * mult
	if v >= math.MaxInt64 {
		return i64Ptr(math.MaxInt64)
	}
	return i64Ptr(int64(math.Round(v)))
}

func itoa(n int) string { return strconv.Itoa(n) }

// dropImpossible forgets process sizes larger than the GPU: when NVML
// cannot read a process's usage PyTorch prints 17179869184.00 GiB (2^64
// bytes), which would wreck every sum.
func dropImpossible(c *CUDAOOM) {
	if c.TotalBytes == nil {
		return
	}
	limit := 2 * *c.TotalBytes
	if c.ProcessBytes != nil && *c.ProcessBytes > limit {
		c.ProcessBytes = nil
	}
	kept := c.OtherProcesses[:0]
	for _, p := range c.OtherProcesses {
		if p.Bytes <= limit {
			kept = append(kept, p)
		}
	}
	c.OtherProcesses = kept
	if len(kept) == 0 {
		c.OtherProcesses = nil
	}
}

// findSelf: 2.1 lists every process on the GPU, this one included, and
// has no "this process has" clause. The listed process holding at least
// what PyTorch reserved is taken to be this one.
func findSelf(c *CUDAOOM) {
	if c.ProcessBytes != nil || c.ReservedBytes == nil || len(c.OtherProcesses) == 0 {
		return
	}
	best := -1
	for i, p := range c.OtherProcesses {
		if p.Bytes >= *c.ReservedBytes && (best < 0 || p.Bytes < c.OtherProcesses[best].Bytes) {
			best = i
		}
	}
	if best < 0 {
		return
	}
	self := c.OtherProcesses[best]
	c.PID, c.ProcessBytes = &self.PID, &self.Bytes
	c.OtherProcesses = append(c.OtherProcesses[:best:best], c.OtherProcesses[best+1:]...)
	if len(c.OtherProcesses) == 0 {
		c.OtherProcesses = nil
	}
}

// fillMissing copies into c the numbers only o has.
func fillMissing(c, o *CUDAOOM) {
	for _, f := range []struct{ dst, src **int64 }{
		{&c.RequestedBytes, &o.RequestedBytes}, {&c.TotalBytes, &o.TotalBytes}, {&c.FreeBytes, &o.FreeBytes},
		{&c.AllowedBytes, &o.AllowedBytes}, {&c.ProcessBytes, &o.ProcessBytes}, {&c.AllocatedBytes, &o.AllocatedBytes},
		{&c.ReservedBytes, &o.ReservedBytes}, {&c.ReservedUnallocatedBytes, &o.ReservedUnallocatedBytes},
		{&c.PrivatePoolBytes, &o.PrivatePoolBytes},
	} {
		if *f.dst == nil {
			*f.dst = *f.src
		}
	}
	if c.Device == nil {
		c.Device = o.Device
	}
	if len(c.OtherProcesses) == 0 {
		c.OtherProcesses = o.OtherProcesses
	}
	if c.Format == "pre-2.1" && o.Format != "pre-2.1" {
		c.Format = o.Format
	}
	if c.ReservedBytes == nil && c.AllocatedBytes != nil && c.ReservedUnallocatedBytes != nil {
		c.ReservedBytes = i64Ptr(*c.AllocatedBytes + *c.ReservedUnallocatedBytes)
	}
}
