package snapshot

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loadFormat(t *testing.T, name string) *Snapshot {
	t.Helper()
	s, err := ReadFile(filepath.Join("testdata", "formats", name+".pickle"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTorch113BareList(t *testing.T) {
	s := loadFormat(t, "torch-1.13")
	if s.Format != "1.13" || len(s.Segments) != 2 || len(s.Traces) != 0 {
		t.Fatalf("format %q, %d segments, %d traces", s.Format, len(s.Segments), len(s.Traces))
	}
	b := s.Segments[0].Blocks
	if b[0].Address != 0x7F0000000000 || b[1].Address != 0x7F0000000400 || b[2].Address != 0x7F0000000600 {
		t.Errorf("addresses not derived from offsets: %x %x %x", b[0].Address, b[1].Address, b[2].Address)
	}
	if b[0].Requested != 1000 || b[1].State != StateActivePendingFree || b[2].Requested != b[2].Size {
		t.Errorf("history not applied: %+v", b)
	}
	if got := s.Frames[s.Stacks[b[0].Stack][1]]; got.Name != "step" || got.Line != 42 {
		t.Errorf("stack from history: %+v", got)
	}
	d := Summarize(s).Devices[0]
	if d.Allocated != 1024+30<<20 || d.Requested != 1000+30<<20-100 || d.Active != d.Allocated+512 {
		t.Errorf("summary %+v", d)
	}
	if !strings.Contains(MemoryVizStats(s), "[aa] 40.0MiB allocated, 10.0MiB (0.0% internal) free\nsegments: 2\n") {
		t.Errorf("segsum:\n%s", MemoryVizStats(s))
	}
}

func TestTorch20History(t *testing.T) {
	s := loadFormat(t, "torch-2.0")
	if s.Format != "2.0" || len(s.Traces) != 1 || len(s.Traces[0]) != 5 {
		t.Fatalf("format %q traces %d", s.Format, len(s.Traces))
	}
	if s.Traces[0][0].HasTime || s.Segments[0].Blocks[0].Requested != 1000 {
		t.Errorf("entries %+v blocks %+v", s.Traces[0][0], s.Segments[0].Blocks)
	}
	sum := Summarize(s)
	tr := sum.Traces[0]
	if tr.Start.Allocated != 0 || tr.PeakAlloc.Allocated != 3048 || tr.PeakAlloc.Index != 2 || tr.HasTime {
		t.Errorf("trace summary %+v", tr)
	}
}

func TestTorch21FramesOnBlocks(t *testing.T) {
	s := loadFormat(t, "torch-2.1")
	if s.Format != "2.1" || len(s.Traces) != 2 || len(s.Traces[1]) != 0 {
		t.Fatalf("format %q, traces %d", s.Format, len(s.Traces))
	}
	top := TopSites(s, 1)
	if top.AtSnapshot[0].Sites[0].Key != "train.py:42 step" || top.AtSnapshot[0].Sites[0].Via != "torch/nn/modules/linear.py:114 forward" {
		t.Errorf("top site %+v", top.AtSnapshot[0].Sites[0])
	}
}

func TestFutureKeysIgnored(t *testing.T) {
	s := loadFormat(t, "future")
	if s.Format != "2.2+" || len(s.Segments) != 2 || len(s.Traces) != 2 {
		t.Fatalf("format %q, %d segments", s.Format, len(s.Segments))
	}
	seg := s.Segments[0]
	if seg.Device != 1 || seg.PoolID != [2]int64{1, 2} || seg.Stream != 7 || seg.Blocks[0].State != StateActivePendingFree {
		t.Errorf("segment %+v", seg)
	}
	e := s.Traces[1]
	if e[1].Action != ActionAlloc || s.Texts[e[1].Compile] != "[0/0]" || e[3].Action != ActionUnknown || !e[0].HasTime {
		t.Errorf("trace %+v", e)
	}
	if s.AllocatorSettings["max_split_size"] != int64(134217728) || len(s.Annotations) != 2 {
		t.Errorf("settings %v annotations %v", s.AllocatorSettings, s.Annotations)
	}
	sum := Summarize(s)
	if len(sum.Devices) != 2 || sum.Devices[0].Device != -1 || sum.Devices[1].Pools["large (private pool)"].Segments != 1 {
		t.Errorf("devices %+v", sum.Devices)
	}
	if !strings.Contains(MemoryVizStats(s), "free stream_7\n") {
		t.Errorf("segsum lacks the stream: %s", MemoryVizStats(s))
	}
}

func TestHostileNumbers(t *testing.T) {
	s := loadFormat(t, "hostile")
	_ = Summarize(s)
	_ = TopSites(s, 3)
	_ = FindLeaks(s, LeakOptions{})
	_ = Compare(s, s, 1)
	tl := BuildTimeline(s, 0)
	_ = tl.Buckets(0, tl.Entries, 10)
	if got := MemoryVizStats(s); !strings.Contains(got, "segments: 2") {
		t.Errorf("segsum %q", got)
	}
}

// TestTraceEntryTwice: a crafted file listing one memoized trace entry
// twice, and in a second device's list, decodes without a panic.
func TestTraceEntryTwice(t *testing.T) {
	s := loadFormat(t, "shared-entries")
	if len(s.Traces) != 2 || len(s.Traces[0]) < 1 {
		t.Fatalf("traces %v", s.Traces)
	}
}

// TestTruncatedReal: a real snapshot cut anywhere is an error, never a
// panic or a partial result.
func TestTruncatedReal(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "real", "oom_huge.pickle"))
	if err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut < len(raw)-1; cut += 97 {
		if _, err := ReadAny(bytes.NewReader(raw[:cut]), int64(cut)); err == nil {
			t.Fatalf("cut at %d: no error", cut)
		}
	}
}

// TestMutatedReal flips bytes of a real snapshot (fixed seed): every
// variant must decode or fail cleanly, and whatever decodes must survive
// every analysis.
func TestMutatedReal(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "real", "stacks_all_small.pickle"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	decoded := 0
	for i := 0; i < 800; i++ {
		b := append([]byte(nil), raw...)
		for k := 0; k < 1+rng.IntN(3); k++ {
			b[rng.IntN(len(b))] = byte(rng.IntN(256))
		}
		s, err := ReadAny(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			continue
		}
		decoded++
		_ = Summarize(s)
		_ = TopSites(s, 2)
		_ = FindLeaks(s, LeakOptions{})
		_ = Compare(s, s, 1)
		for dev := range s.Traces {
			_ = BuildTimeline(s, dev).Buckets(0, len(s.Traces[dev]), 20)
		}
		_, _ = WriteHTML(io.Discard, s, HTMLOptions{})
	}
	if decoded == 0 {
		t.Error("no mutation decoded: the test exercises nothing")
	}
}

// An empty file and a JSON document get errors that say what they are,
// plain or gzip-compressed, instead of "unknown opcode 0x7b".
func TestWrongInputsNamed(t *testing.T) {
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "empty input"},
		{"json", []byte(`{"segments": []}`), "JSON"},
		{"json list", []byte(`[{"address": 1}]`), "JSON"},
		{"gzip json", gz([]byte(`{"a": 1}`)), "JSON"},
		{"gzip empty", gz(nil), "empty input"},
	} {
		_, err := ReadAny(bytes.NewReader(c.in), int64(len(c.in)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
