package procfs

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

const kB = 1024

func u64(v uint64) *uint64 { return &v }

func testFS(t *testing.T, root string) FS {
	t.Helper()
	fs, err := NewFS(filepath.Join("testdata", root))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestMeminfoH200(t *testing.T) {
	m, err := testFS(t, "proc").Meminfo()
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		got  *uint64
		want uint64
	}{
		{"MemTotal", m.MemTotalBytes, 131981020 * kB},
		{"MemFree", m.MemFreeBytes, 130732016 * kB},
		{"MemAvailable", m.MemAvailableBytes, 131482624 * kB},
		{"SwapTotal", m.SwapTotalBytes, 0},
	}
	for _, c := range checks {
		if c.got == nil || *c.got != c.want {
			t.Errorf("%s = %v, want %d", c.name, c.got, c.want)
		}
	}
}

func TestMemoryPressure(t *testing.T) {
	p, err := testFS(t, "proc").MemoryPressure()
	if err != nil {
		t.Fatal(err)
	}
	if p.Some == nil || p.Full == nil || p.Some.TotalMicros != 0 || p.Some.Avg10 != 0 {
		t.Errorf("pressure = %+v", p)
	}
	_, err = testFS(t, "proc-nopsi").MemoryPressure()
	if !errors.Is(err, ErrNotPresent) {
		t.Errorf("no PSI file: err = %v, want ErrNotPresent", err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "pressure"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "pressure", "memory"), []byte("some avg10=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = fs.MemoryPressure(); err == nil || !strings.Contains(err.Error(), filepath.Join(root, "pressure", "memory")) {
		t.Errorf("garbled pressure file: err = %v, want one naming the file", err)
	}
}

func TestStatusFromTree(t *testing.T) {
	fs := testFS(t, "proc")
	s, err := fs.Status(517)
	if err != nil {
		t.Fatal(err)
	}
	want := Status{
		PID: 517, Name: "python3", State: "R", PPid: 516, UID: 0, NSpid: []int{517}, Threads: 35,
		VmHWMBytes: u64(1515412 * kB), VmRSSBytes: u64(1515412 * kB), RssAnonBytes: u64(944080 * kB),
		RssFileBytes: u64(550592 * kB), RssShmemBytes: u64(20740 * kB), VmSwapBytes: u64(0),
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("status = %+v\nwant %+v", s, want)
	}
	if _, err := fs.Status(999999); !IsVanished(err) {
		t.Errorf("missing pid: err = %v, want vanished", err)
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Status
		wantErr bool
	}{
		{
			// CentOS 7 (3.10): no RssAnon/RssFile/RssShmem lines.
			name: "kernel 3.10",
			in:   "Name:\tpython\nState:\tS (sleeping)\nTgid:\t10\nPid:\t10\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nVmSwap:\t 512 kB\nThreads:\t3\n",
			want: Status{PID: 10, Name: "python", State: "S", PPid: 1, UID: 1000, Threads: 3,
				VmHWMBytes: u64(2048 * kB), VmRSSBytes: u64(1024 * kB), VmSwapBytes: u64(512 * kB)},
		},
		{
			name: "kernel thread, no Vm lines",
			in:   "Name:\tkthreadd\nState:\tS (sleeping)\nPid:\t2\nPPid:\t0\nUid:\t0\t0\t0\t0\nNSpid:\t2\nThreads:\t1\n",
			want: Status{PID: 2, Name: "kthreadd", State: "S", UID: 0, NSpid: []int{2}, Threads: 1},
		},
		{
			name: "container: two namespaces",
			in:   "Name:\tpython3\nPid:\t4711\nPPid:\t4700\nNSpid:\t4711\t12\n",
			want: Status{PID: 4711, Name: "python3", PPid: 4700, NSpid: []int{4711, 12}},
		},
		{name: "bad size", in: "Pid:\t1\nVmRSS:\tlots kB\n", wantErr: true},
		{name: "bad unit", in: "Pid:\t1\nVmRSS:\t12 MB\n", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestSmapsRollup(t *testing.T) {
	fs := testFS(t, "proc")
	r, err := fs.SmapsRollup(517)
	if err != nil {
		t.Fatal(err)
	}
	want := SmapsRollup{
		RssBytes: 1515412 * kB, PssBytes: 1513394 * kB, USSBytes: (541588 + 971368) * kB,
		SharedCleanBytes: 2456 * kB, PrivateCleanBytes: 541588 * kB, PrivateDirtyBytes: 971368 * kB,
		AnonymousBytes: 944080 * kB, Source: "smaps_rollup",
	}
	if r != want {
		t.Errorf("rollup = %+v\nwant %+v", r, want)
	}
}

// Pid 4242 has only smaps, as on kernels before 4.14: the sums must match
// what awk over the same file gives (and the live rollup, within rounding).
func TestSmapsFallback(t *testing.T) {
	r, err := testFS(t, "proc").SmapsRollup(4242)
	if err != nil {
		t.Fatal(err)
	}
	if r.RssBytes != 1820*kB || r.PssBytes != 308*kB || r.USSBytes != (44+108)*kB {
		t.Errorf("summed smaps = %+v", r)
	}
}

func TestOOMScoreCmdlineStat(t *testing.T) {
	fs := testFS(t, "proc")
	o, err := fs.OOMScore(4242)
	if err != nil || o != (OOMScore{Score: 666, Adj: 0}) {
		t.Errorf("oom = %+v, %v", o, err)
	}
	args, err := fs.Cmdline(4242)
	if err != nil || !reflect.DeepEqual(args, []string{"sleep", "300"}) {
		t.Errorf("cmdline = %q, %v", args, err)
	}
	st, err := fs.Stat(4242)
	if err != nil || st.PPid != 17619 || st.Comm != "sleep" || st.StartTicks != 42029 {
		t.Errorf("stat = %+v, %v", st, err)
	}
	pids, _ := fs.PIDs()
	sort.Ints(pids)
	if !reflect.DeepEqual(pids, []int{517, 4242}) {
		t.Errorf("pids = %v", pids)
	}
	if ok, err := fs.MapsContain(4242, "libc.so"); !ok || err != nil {
		t.Errorf("maps libc: %v %v", ok, err)
	}
	if ok, _ := fs.MapsContain(4242, "libtorch"); ok {
		t.Error("sleep maps libtorch?")
	}
}

func TestSysctl(t *testing.T) {
	fs := testFS(t, "proc")
	for _, name := range []string{"vm.swappiness", "vm/swappiness"} {
		if v, err := fs.Sysctl(name); err != nil || v != "60" {
			t.Errorf("%s = %q, %v", name, v, err)
		}
	}
	for _, bad := range []string{"", "..", "vm/../../etc/passwd"} {
		if _, err := fs.Sysctl(bad); err == nil {
			t.Errorf("Sysctl(%q) did not fail", bad)
		}
	}
	if _, err := fs.Sysctl("vm.nonexistent"); !IsVanished(err) {
		t.Errorf("missing sysctl: %v", err)
	}
}

func TestTHP(t *testing.T) {
	got, err := ReadTHP(filepath.Join("testdata", "sys"))
	want := THP{Enabled: "madvise", Defrag: "madvise", ShmemEnabled: "never"}
	if err != nil || got != want {
		t.Errorf("thp = %+v, %v", got, err)
	}
	if _, err := ReadTHP(t.TempDir()); !errors.Is(err, ErrNotPresent) {
		t.Errorf("no THP: %v", err)
	}
	for in, want := range map[string]string{"[always] madvise never\n": "always", "always defer [defer+madvise] madvise never": "defer+madvise"} {
		if got, err := parseBracketed(in); err != nil || got != want {
			t.Errorf("parseBracketed(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"always madvise", "[never"} {
		if _, err := parseBracketed(bad); err == nil {
			t.Errorf("parseBracketed(%q) did not fail", bad)
		}
	}
}

// The live machine: our own process must read back without error.
func TestLiveSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc on this machine")
	}
	fs, err := NewFS("/proc")
	if err != nil {
		t.Fatal(err)
	}
	pid := os.Getpid()
	s, err := fs.Status(pid)
	if err != nil || s.PID != pid || s.VmRSSBytes == nil {
		t.Fatalf("status = %+v, %v", s, err)
	}
	r, err := fs.SmapsRollup(pid)
	if err != nil || r.PssBytes == 0 || r.PssBytes > r.RssBytes {
		t.Fatalf("rollup = %+v, %v", r, err)
	}
}

func TestSmapsSumOnRollupHost(t *testing.T) {
	// 4242 has only smaps: SmapsSum and SmapsRollup agree on it.
	fs := testFS(t, "proc")
	a, err1 := fs.SmapsSum(4242)
	b, err2 := fs.SmapsRollup(4242)
	if err1 != nil || err2 != nil || a != b || a.Source != "smaps" {
		t.Errorf("sum %+v %v, rollup %+v %v", a, err1, b, err2)
	}
	if _, err := fs.SmapsSum(999999); !IsVanished(err) {
		t.Errorf("vanished: %v", err)
	}
}

// Kernels before 3.14 print no MemAvailable: missing, not zero.
func TestMeminfoOldKernel(t *testing.T) {
	dir := t.TempDir()
	old := "MemTotal:        3880000 kB\nMemFree:          120000 kB\nBuffers:           20000 kB\nCached:           900000 kB\nSwapTotal:       2097148 kB\nSwapFree:        2097148 kB\n"
	if err := os.WriteFile(filepath.Join(dir, "meminfo"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := fs.Meminfo()
	if err != nil || m.MemAvailableBytes != nil || m.MemTotalBytes == nil || *m.MemTotalBytes != 3880000*kB || *m.SwapTotalBytes != 2097148*kB {
		t.Errorf("old meminfo = %+v, %v", m, err)
	}
}
