package procfs

import "testing"

func TestOOMKillsFromTree(t *testing.T) {
	n, err := testFS(t, "proc").OOMKills()
	if err != nil {
		t.Fatal(err)
	}
	if n == nil || *n != 5 {
		t.Fatalf("got %v, want 5", n)
	}
}

func TestParseOOMKills(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64 // -1: absent
		err  bool
	}{
		{"nr_free_pages 30977845\nnr_zone_inactive_anon 52224\noom_kill 3\npgfault 1\n", 3, false},
		{"nr_free_pages 1\npgfault 2\n", -1, false}, // kernel < 4.13
		{"oom_kill x\n", -1, true},
		{"", -1, false},
	} {
		n, err := parseOOMKills([]byte(c.in))
		if (err != nil) != c.err {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if (n == nil) != (c.want < 0) || (n != nil && int64(*n) != c.want) {
			t.Errorf("%q: got %v, want %d", c.in, n, c.want)
		}
	}
}

func FuzzParseOOMKills(f *testing.F) {
	f.Add([]byte("oom_kill 3\n"))
	f.Add([]byte("nr_free_pages 1\noom_kill 18446744073709551616\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = parseOOMKills(b) })
}
