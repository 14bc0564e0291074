package oomexplain

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parseString(t *testing.T, s string) []Incident {
	t.Helper()
	incs, err := Parse(strings.NewReader(s), Options{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ExplainAll(incs, Context{})
	return incs
}

// prefixLines puts a launcher prefix before every line, as torchrun
// (PyTorch >= 2.2 "[rankN]:") or srun --label ("N: ") do.
func prefixLines(s, prefix string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, prefix+l)
	}
	return out
}

// Two ranks failing at once, their lines interleaved, one of them with a
// wrapped message: each rank's message is put back together on its own.
func TestCUDARanksInterleaved(t *testing.T) {
	a := prefixLines(readTestdata(t, "cuda/cuda-oom-other-process-holds-gpu.log"), "[rank0]: ")
	b := prefixLines(readTestdata(t, "cuda/2.x-wrapped-private-pools.log"), "[rank1]: ")
	var mixed []string
	for i := 0; i < len(a) || i < len(b); i++ {
		if i < len(b) {
			mixed = append(mixed, b[i])
		}
		if i < len(a) {
			mixed = append(mixed, a[i])
		}
	}
	incs := parseString(t, strings.Join(mixed, "\n"))
	if len(incs) != 2 {
		t.Fatalf("got %d incidents, want 2", len(incs))
	}
	byRank := map[int]*Incident{}
	for i := range incs {
		if incs[i].Rank == nil {
			t.Fatalf("incident %d has no rank", i)
		}
		byRank[*incs[i].Rank] = &incs[i]
	}
	if !near(byRank[0].CUDA.RequestedBytes, gb(60)) || len(byRank[0].CUDA.OtherProcesses) != 2 {
		t.Errorf("rank 0: %+v", byRank[0].CUDA)
	}
	if !near(byRank[1].CUDA.ReservedUnallocatedBytes, mb(138.45)) || !near(byRank[1].CUDA.PrivatePoolBytes, mb(22)) {
		t.Errorf("rank 1 wrapped message not rejoined: %+v", byRank[1].CUDA)
	}
	labelled := parseString(t, strings.Join(prefixLines(readTestdata(t, "cuda/cuda-oom-huge-message.txt"), "gpu-node-07: 3: "), "\n"))
	if len(labelled) != 1 || !ptrEq(labelled[0].Rank, 3) || labelled[0].Host != "gpu-node-07" {
		t.Errorf("pdsh + srun labels: %+v", labelled)
	}
}

// A chained traceback repeats the error ("During handling of the above
// exception..."): one incident, counted twice, with the later, more
// specific exception class kept when the first had none.
func TestCUDAChainedTracebackCountedOnce(t *testing.T) {
	tb := readTestdata(t, "cuda/cuda-oom-uncaught-traceback.log")
	log := tb + "\nDuring handling of the above exception, another exception occurred:\n\n" + tb
	incs := parseString(t, log)
	if len(incs) != 1 || incs[0].Count != 2 {
		t.Fatalf("got %d incidents (count %d), want 1 counted twice", len(incs), incs[0].Count)
	}
	// The same message far apart is a second failure (a retry loop).
	far := tb + strings.Repeat("step 1 loss 2.0\n", dedupDistance+10) + tb
	if n := len(parseString(t, far)); n != 2 {
		t.Errorf("distant repeat: %d incidents, want 2", n)
	}
}

// The DataLoader's "killed by signal" and the kernel's kill of the same pid
// are one story.
func TestCorrelateDataLoaderWithKernel(t *testing.T) {
	kernel := readTestdata(t, "kernel/local-v1-6.18.dmesg")
	train := "RuntimeError: DataLoader worker (pid 10051) is killed by signal: Killed.\n"
	incs := parseString(t, kernel+train)
	if len(incs) != 2 {
		t.Fatalf("got %d incidents", len(incs))
	}
	if !equalInts(incs[0].Related, []int{1}) || !equalInts(incs[1].Related, []int{0}) {
		t.Fatalf("related %v / %v", incs[0].Related, incs[1].Related)
	}
	e := incs[1].Explanation
	if e.Verdict != VerdictKilledByKernel || !strings.Contains(e.Summary, "/tmoom-capture-10205") {
		t.Errorf("worker verdict %s: %s", e.Verdict, e.Summary)
	}
	if e := Explain(&incs[1], Context{}); e.Verdict != VerdictKilledSIGKILL {
		t.Errorf("alone, the worker's kill has no known sender: %s", e.Verdict)
	}
}

func TestExplainUsesSupervisorContext(t *testing.T) {
	inc := parseString(t, readTestdata(t, "kernel/cgroup-v1-6.18.dmesg"))[0]
	e := Explain(&inc, Context{JobPIDs: []int{19335}, CgroupPath: "/trainjob"})
	all := strings.Join(e.Arithmetic, "\n")
	if !strings.Contains(all, "job's own cgroup") || !strings.Contains(all, "one of the job's processes") {
		t.Errorf("context not used:\n%s", all)
	}
	cuda := parseString(t, readTestdata(t, "cuda/cuda-oom-other-process-holds-gpu.log"))[0]
	e = Explain(&cuda, Context{GPUProcesses: []GPUProcess{{PID: 443, Name: "python3 serve.py"}},
		MemoryStats: map[string]int64{"allocated_bytes.all.peak": 11 * gib, "num_alloc_retries": 3}})
	txt := strings.Join(append(e.Arithmetic, e.Recommendations...), "\n")
	for _, want := range []string{"pid 443 (python3 serve.py)", "peak allocated (hook): 11.00 GiB", "retried 3 times"} {
		if !strings.Contains(txt, want) {
			t.Errorf("missing %q in\n%s", want, txt)
		}
	}
}

// Bad input: binary junk, a 10 MB line, a report cut short. Parsing goes
// on, keeps what it can, never panics, and keeps lines bounded.
func TestBadInput(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	junk := make([]byte, 1<<20)
	rng.Read(junk)
	if incs := parseString(t, string(junk)); len(incs) > 3 {
		t.Errorf("junk gave %d incidents", len(incs))
	}
	huge := strings.Repeat("A", 10<<20) + " CUDA out of memory " + strings.Repeat("B", 100)
	incs := parseString(t, huge+"\n"+readTestdata(t, "cuda/cuda-oom-huge-message.txt"))
	if len(incs) != 1 || !near(incs[0].CUDA.RequestedBytes, gb(372.53)) {
		t.Fatalf("after a 10 MB line: %d incidents", len(incs))
	}
	for _, r := range incs[0].Raw {
		if len(r) > 16<<10 {
			t.Errorf("raw line of %d bytes kept", len(r))
		}
	}
	full := readTestdata(t, "kernel/cgroup-v2-6.18.dmesg")
	lines := strings.SplitAfter(full, "\n")
	for _, cut := range []int{1, 30, 60, len(lines) - 2} { // lines ends with ""
		part := parseString(t, strings.Join(lines[:cut], ""))
		if len(part) != 1 || !part[0].Truncated || part[0].Kernel.Trigger == nil {
			t.Errorf("cut at %d: %d incidents", cut, len(part))
		}
	}
}

func TestBoundedIncident(t *testing.T) {
	var buf bytes.Buffer
	buf.WriteString("[ 1.000000] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n")
	buf.WriteString("[ 1.000001] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name\n")
	for i := 0; i < 20000; i++ {
		buf.WriteString("[ 1.000002] [  ")
		buf.WriteString(strings.Repeat("1", 1) + string(rune('0'+i%10)))
		buf.WriteString("]     0   100     8529      507   106496        0             0 worker\n")
	}
	incs, _ := Parse(&buf, Options{MaxRaw: 32, MaxTasks: 8})
	if len(incs) != 1 {
		t.Fatalf("%d incidents", len(incs))
	}
	ko := incs[0].Kernel
	if len(incs[0].Raw) > 32+8 || len(ko.Tasks) > 8 || !incs[0].Truncated {
		t.Errorf("raw %d tasks %d truncated %v", len(incs[0].Raw), len(ko.Tasks), incs[0].Truncated)
	}
}

// hardWrap cuts every line at width columns, as a terminal does when its
// output is copied: mid-word, nothing lost.
func hardWrap(s string, width int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for len(l) > width {
			out = append(out, l[:width])
			l = l[width:]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func TestHardWrappedPastes(t *testing.T) {
	for _, width := range []int{80, 100, 132} {
		c := parseString(t, hardWrap(readTestdata(t, "cuda/cuda-oom-fragmentation-message.txt"), width))
		if len(c) != 1 || !near(c[0].CUDA.TotalBytes, gb(139.80)) || !near(c[0].CUDA.ReservedUnallocatedBytes, gb(3.14)) ||
			!near(c[0].CUDA.AllowedBytes, gb(5.59)) || c[0].Explanation.Verdict != VerdictFragmentation {
			t.Errorf("cuda wrapped at %d: %d incidents %+v", width, len(c), c)
		}
		k := parseString(t, hardWrap(readTestdata(t, "kernel/cgroup-v2-6.18.dmesg"), width))
		if len(k) != 1 || k[0].Kernel.Victim == nil || !ptrEq(k[0].Kernel.Victim.FileRSSBytes, 7276*kib) ||
			k[0].Kernel.OOMMemcg != "/tmcap" || k[0].Kernel.TaskMemcg != "/tmcap" || len(k[0].Kernel.Tasks) != 1 || k[0].Kernel.Tasks[0].Name != "python3" {
			t.Errorf("kernel wrapped at %d: %+v", width, k)
		}
	}
}

// Every capture, back to back with training output between them (the
// first noise line unprefixed, right after the report): each is found as
// it is alone, none swallows the next.
func TestIncidentsInMixedStream(t *testing.T) {
	noise := "Epoch 3:  42%|####      | 840/2000 [05:11<07:10,  2.75it/s, loss=2.31]\n" +
		"step 840 | loss 2.4185 | lr 2.99e-04 | grad_norm 0.873 | tokens/s 412345 | mem 61.2GiB\n" +
		"[ 5123.000001] e1000e 0000:00:19.0 eth0: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: Rx/Tx\n"
	var all strings.Builder
	want := 0
	for _, sub := range []string{"kernel", "cuda", "host"} {
		names, _ := filepath.Glob(filepath.Join("testdata", sub, "*"))
		for _, n := range names {
			rel, _ := filepath.Rel("testdata", n)
			want += len(parseFile(t, rel))
			all.WriteString(readTestdata(t, rel))
			all.WriteString("\n")
			all.WriteString(strings.Repeat(noise, 200))
		}
	}
	if got := len(parseString(t, all.String())); got != want {
		t.Errorf("%d incidents in the stream, %d in the files alone", got, want)
	}
}
