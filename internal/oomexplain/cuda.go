package oomexplain

// GPU out-of-memory errors, as PyTorch words them
// (c10/cuda/CUDACachingAllocator.cpp, CUDAMallocAsyncAllocator.cpp):
//
//	<= 2.0: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 11.17 GiB total capacity;
//	        10.34 GiB already allocated; 13.81 MiB free; [5.60 GiB allowed; ]10.54 GiB reserved
//	        in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb ...
//	  1.x:  ...; 6.83 GiB cached)
//	  2.1:  CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacty of 14.75 GiB
//	        of which 3.06 MiB is free. Process 12345 has 14.74 GiB memory in use. ...
//	>= 2.2: CUDA out of memory. Tried to allocate 1.40 GiB. GPU 0 has a total capacity of 139.80 GiB
//	        of which 133.47 GiB is free. [Process N has X memory in use. ...] Including non-PyTorch
//	        memory, this process has 6.32 GiB memory in use. [5.59 GiB allowed; ]Of the allocated
//	        memory 2.44 GiB is allocated by PyTorch, [with X allocated in private pools (e.g., CUDA
//	        Graphs), ]and 3.14 GiB is reserved by PyTorch but unallocated. If reserved but ...
//	cudaMallocAsync: Allocation on device 0 would exceed allowed memory. (out of memory)
//	        Currently allocated     : 4.86 GiB / Requested : ... / Device limit : ... /
//	        Free (according to CUDA): 0 bytes / PyTorch limit (set by user-supplied memory fraction) / : X
//
// A message may be wrapped over several lines (pastes, loggers): lines of
// the same rank are joined until the message's last clause arrives.

import "strings"

const (
	maxCUDALines  = 12  // a wrapped message never needs more
	dedupDistance = 400 // lines within which a repeated message is the same error
)

type cudaPending struct {
	inc   *Incident
	kind  Kind
	text  strings.Builder // lines joined with a space (word-wrapped pastes)
	tight strings.Builder // lines joined as they are (terminal hard wraps)
	lines int
	start int
	last  int // line number of its last line
}

type cudaParser struct {
	p       *Parser
	pending map[string]*cudaPending
	recent  map[string]*Incident // last emitted per rank key, for de-duplication
}

func newCUDAParser(p *Parser) *cudaParser {
	return &cudaParser{p: p, pending: map[string]*cudaPending{}, recent: map[string]*Incident{}}
}

func (c *cudaParser) open() bool { return len(c.pending) > 0 }

func rankKey(l *line) string {
	if l.rank != nil {
		return l.host + "/" + itoa(*l.rank)
	}
	return l.host
}

// cudaWords: every line cudaStartKind accepts holds one of these (not
// a bare "out of memory": the kernel's "Memory cgroup out of memory").
var cudaWords = []string{
	"CUDA out of memory", "HIP out of memory", "OutOfMemoryError", "would exceed", "CUDA error: out of memory",
	"runtime error (2) : out of memory", "THCudaCheck FAIL", "CUBLAS_STATUS_ALLOC_FAILED", "Cuda failure",
}

func (c *cudaParser) feed(l *line) {
	if len(c.pending) == 0 && l.words&wordsCUDA == 0 {
		return // no message open, and the line cannot start one
	}
	key := rankKey(l)
	if c.pending[key] == nil {
		key = c.wrappedKey(key, l)
	}
	if pd := c.pending[key]; pd != nil {
		if c.continues(pd, l) {
			c.appendLine(pd, l)
			if cudaComplete(pd) {
				c.finish(key)
			}
			return
		}
		c.finish(key)
	}
	c.expire(l.no)
	c.start(key, l)
}

// wrappedKey: a terminal that wraps a "[rank1]: ..." line prints the rest
// without the prefix. A line with no prefix of its own, right after the
// last line of another rank's open message, is that message's rest
// (corpus cuda/028: "Of the allocated memory 4" / "0.30 GiB is allocated").
func (c *cudaParser) wrappedKey(key string, l *line) string {
	if l.rank != nil || l.host != "" || l.Prefixed {
		return key
	}
	for k, pd := range c.pending {
		if pd.last == l.no-1 {
			return k
		}
	}
	return key
}

// continues: a line that can be the rest of a wrapped message.
func (c *cudaParser) continues(pd *cudaPending, l *line) bool {
	t := strings.TrimSpace(l.text)
	if t == "" || pd.lines >= maxCUDALines || cudaStartKind(l.text) != "" && pd.kind != KindCUDAMallocAsync {
		return false
	}
	for _, stop := range []string{"Traceback", "File \"", "During handling", "The above exception"} {
		if strings.HasPrefix(t, stop) {
			return false
		}
	}
	return true
}

func (c *cudaParser) appendLine(pd *cudaPending, l *line) {
	pd.lines++
	pd.last = l.no
	c.p.addRaw(pd.inc, l.Text)
	if pd.kind == KindCUDAMallocAsync {
		pd.text.WriteByte('\n')
	} else {
		pd.text.WriteByte(' ')
	}
	pd.text.WriteString(strings.TrimSpace(l.text))
	pd.tight.WriteString(strings.TrimRight(l.text, " \t"))
}

// expire ends messages of other ranks that never completed.
func (c *cudaParser) expire(no int) {
	for key, pd := range c.pending {
		if no-pd.start > 3*maxCUDALines {
			c.finish(key)
		}
	}
}

// cudaStartKind recognises a line that starts a GPU OOM message.
func cudaStartKind(t string) Kind {
	switch {
	case strings.Contains(t, "CUDA out of memory") || strings.Contains(t, "HIP out of memory") ||
		strings.Contains(t, "OutOfMemoryError: Tried to allocate"):
		return KindCUDAOOM
	case strings.Contains(t, "would exceed allowed memory"):
		return KindCUDAMallocAsync
	case strings.Contains(t, "CUDA error: out of memory") || strings.Contains(t, "runtime error (2) : out of memory") ||
		strings.Contains(t, "THCudaCheck FAIL") && strings.Contains(t, "error=2 : out of memory"):
		return KindCUDAError
	case strings.Contains(t, "CUBLAS_STATUS_ALLOC_FAILED"):
		return KindCUBLASAlloc
	case strings.Contains(t, "Cuda failure") && strings.Contains(t, "out of memory"):
		return KindNCCLOOM
	}
	return ""
}

func (c *cudaParser) start(key string, l *line) {
	kind := cudaStartKind(l.text)
	if kind == "" {
		return
	}
	pd := &cudaPending{kind: kind, start: l.no, last: l.no, lines: 1}
	pd.inc = c.p.newIncident(kind, l)
	c.p.addRaw(pd.inc, l.Text)
	pd.text.WriteString(strings.TrimSpace(l.text))
	pd.tight.WriteString(strings.TrimSpace(l.text))
	c.pending[key] = pd
	if cudaComplete(pd) {
		c.finish(key)
	}
}

// cudaComplete: the message's last clause has arrived.
func cudaComplete(pd *cudaPending) bool {
	s := pd.text.String()
	switch pd.kind {
	case KindCUDAOOM:
		for _, end := range []string{"unallocated.", "PYTORCH_CUDA_ALLOC_CONF", "in total by PyTorch)", " cached)", "CUDA Graphs).", "by PyTorch."} {
			if strings.Contains(s, end) {
				return true
			}
		}
		return false
	case KindCUDAMallocAsync:
		return strings.Contains(s, "PyTorch limit") && strings.HasSuffix(strings.TrimSpace(s), "B") && !strings.HasSuffix(s, "memory fraction)") ||
			pd.lines >= 7
	}
	return true
}

// finish parses the gathered message and emits it, or counts it as a
// repeat of the same error from the same rank (chained tracebacks).
func (c *cudaParser) finish(key string) {
	pd := c.pending[key]
	delete(c.pending, key)
	inc := pd.inc
	inc.CUDA = parseCUDAMessage(pd.kind, pd.text.String())
	if pd.lines > 1 && pd.kind == KindCUDAOOM {
		// A terminal cuts words in two ("capac|ity"): what the spaced
		// reading missed, the tight one may hold.
		fillMissing(inc.CUDA, parseCUDAMessage(pd.kind, pd.tight.String()))
	}
	if prev := c.recent[key]; prev != nil && inc.Line-prev.Line < dedupDistance {
		if thcThrown(prev, inc) {
			prev.CUDA.Exception, prev.CUDA.Message = inc.CUDA.Exception, inc.CUDA.Message
			return
		}
		if repeatOf(prev, inc) {
			prev.Count++
			if prev.CUDA.Exception == "" {
				prev.CUDA.Exception = inc.CUDA.Exception
			}
			return
		}
	}
	if inc.CUDA.PID != nil {
		inc.PIDs = []int{*inc.CUDA.PID}
	}
	if len(c.recent) > 4096 { // bounded however many rank/host prefixes a log invents
		clear(c.recent)
	}
	c.recent[key] = inc
	c.p.emit(inc)
}

// repeatOf: inc is prev printed again (a chained traceback, or a message
// logged before its exception is raised), not a new failure. Python
// prints a raised exception with its class; the same message printed
// bare after it (corpus cuda/049: "Exception string: 'CUDA error: out of
// memory") is the program reporting a failure it caught and survived:
// a later failure of its own.
func repeatOf(prev, inc *Incident) bool {
	if prev.Kind != inc.Kind || prev.CUDA.Message != inc.CUDA.Message {
		return false
	}
	return prev.CUDA.Exception == "" || inc.CUDA.Exception != ""
}

// thcThrown: PyTorch <= 0.4 prints "THCudaCheck FAIL file=... line=N
// error=2 : out of memory" and then throws "RuntimeError: cuda runtime
// error (2) : out of memory at file:N": one failure told twice.
func thcThrown(prev, inc *Incident) bool {
	return prev.Kind == KindCUDAError && inc.Kind == KindCUDAError &&
		strings.HasPrefix(prev.CUDA.Message, "THCudaCheck FAIL") && strings.HasPrefix(inc.CUDA.Message, "cuda runtime error")
}

func (c *cudaParser) flush() {
	for key := range c.pending {
		c.finish(key)
	}
}
