package shm

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseMount(t *testing.T) {
	t.Parallel()
	const ram = 64 << 30
	cases := []struct {
		name, mountinfo string
		want            Mount
		level           Level
	}{
		{"docker 64M", "1 0 0:1 / /dev/shm rw - tmpfs shm rw,size=65536k\n",
			Mount{true, "rw,size=65536k", 64 << 20, "size option"}, TooSmall},
		{"2G", "1 0 0:1 / /dev/shm rw - tmpfs shm rw,size=2g\n",
			Mount{true, "rw,size=2g", 2 << 30, "size option"}, Small},
		{"50%", "25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=50%\n",
			Mount{true, "rw,size=50%", 32 << 30, "50% of RAM"}, Enough},
		{"default", "30 24 0:26 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,seclabel\n",
			Mount{true, "rw,seclabel", 32 << 30, "tmpfs default: half of RAM"}, Enough},
		{"last wins", "1 0 0:1 / /dev/shm rw - tmpfs shm rw,size=65536k\n2 1 0:2 / /dev/shm rw - tmpfs shm rw,size=16g\n",
			Mount{true, "rw,size=16g", 16 << 30, "size option"}, Enough},
		{"none", "1 0 0:1 / / rw - xfs /dev/sda rw\n", Mount{}, TooSmall},
	}
	for _, c := range cases {
		m := ParseMount(c.mountinfo, ram)
		if m != c.want || m.Judge(ram) != c.level {
			t.Errorf("%s: %+v level %d, want %+v level %d", c.name, m, m.Judge(ram), c.want, c.level)
		}
	}
	// A quarter of a small machine's RAM is enough.
	if l := (Mount{Mounted: true, SizeBytes: 2 << 30}).Judge(8 << 30); l != Enough {
		t.Errorf("2 GiB of 8 GiB RAM: level %d", l)
	}
	if n, _ := configuredSize("rw,size=50%", 1<<30); n != 1<<29 {
		t.Errorf("configuredSize 50%% = %d", n)
	}
	if got := ParseMount(cases[0].mountinfo, 0).Title(); got != "/dev/shm is 64.00 MiB" {
		t.Errorf("Title = %q", got)
	}
	if got := (Mount{}).Title(); got != "/dev/shm is not mounted" {
		t.Errorf("Title = %q", got)
	}
}

func TestReadMount(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	if _, err := ReadMount(proc, 0); err == nil {
		t.Fatal("no mountinfo: want an error")
	}
	os.MkdirAll(filepath.Join(proc, "self"), 0o755)
	os.WriteFile(filepath.Join(proc, "self", "mountinfo"), []byte("1 0 0:1 / /dev/shm rw - tmpfs shm rw,size=65536k\n"), 0o644)
	if m, err := ReadMount(proc, 0); err != nil || m.SizeBytes != 64<<20 {
		t.Fatalf("ReadMount = %+v, %v", m, err)
	}
}

func FuzzParseMount(f *testing.F) {
	f.Add("25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684096k\n")
	f.Add("1 0 0:1 / /dev/shm rw - tmpfs shm rw,size=50%\n")
	f.Fuzz(func(t *testing.T, s string) {
		m := ParseMount(s, 1<<34)
		_ = m.Judge(1 << 34)
		if !m.Mounted && m != (Mount{}) {
			t.Fatalf("unmounted with figures: %+v", m)
		}
	})
}
