package allocconf

import "testing"

func TestSplit(t *testing.T) {
	opts, err := Split("a:1, b:[256:1,512:2] ,c:x")
	if err != nil || len(opts) != 3 || opts[1][1] != "[256:1,512:2]" {
		t.Errorf("Split: %v %v", opts, err)
	}
	for _, bad := range []string{"a", "b:[1,2", "x:1,y"} {
		if _, err := Split(bad); err == nil {
			t.Errorf("Split(%q) accepted", bad)
		}
	}
}

func TestParse(t *testing.T) {
	c, err := Parse("expandable_segments:True, max_split_size_mb:128,garbage_collection_threshold:0.6,roundup_power2_divisions:[256:1,>:4]")
	if err != nil || !c.Expandable || c.MaxSplit != 128<<20 || c.Fraction != 0 || c.GCThreshold != 0.6 {
		t.Fatalf("Parse: %+v %v", c, err)
	}
	if want := [RoundupIntervals]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 4, 4, 4, 4, 4, 4}; c.Roundup != want {
		t.Errorf("roundup %v, want %v", c.Roundup, want)
	}
	if got := c.String(); got != "expandable_segments:True,max_split_size_mb:128,roundup_power2_divisions:[1:1,2:1,4:1,8:1,16:1,32:1,64:1,128:1,256:1,512:4,1024:4,2048:4,4096:4,8192:4,16384:4,32768:4],garbage_collection_threshold:0.6" {
		t.Errorf("String %q", got)
	}
	if c, err := Parse("roundup_power2_divisions:16"); err != nil || c.Roundup[0] != 16 || c.Roundup[15] != 16 || c.String() != "roundup_power2_divisions:16" {
		t.Errorf("one for all: %+v %v", c, err)
	}
	// the first entry covers the intervals before it; after the last, none
	if c, err := Parse("roundup_power2_divisions:[64:8,1024:2]"); err != nil || c.Roundup[0] != 8 || c.Roundup[6] != 8 || c.Roundup[7] != 0 || c.Roundup[10] != 2 || c.Roundup[11] != 0 {
		t.Errorf("list: %v %v", c.Roundup, err)
	}
	c, err = Parse("per_process_memory_fraction:0.5,backend:cudaMallocAsync")
	if err != nil || c.Fraction != 0.5 || !c.AsyncBackend {
		t.Errorf("Parse: %+v %v", c, err)
	}
	for bad, want := range map[string]string{
		"expandable_segments:yes":         "option expandable_segments:yes: want True or False",
		"max_split_size_mb:20":            "option max_split_size_mb:20: want more than 20",
		"max_split_size_mb:x":             "option max_split_size_mb:x: invalid syntax",
		"per_process_memory_fraction:1.5": "option per_process_memory_fraction:1.5: want a fraction in (0, 1]",
		"expandable_segments":             `option "expandable_segments" has no ':value'`,
		"garbage_collection_threshold:1":  "option garbage_collection_threshold:1: want a fraction in (0, 1)",
	} {
		if _, err := Parse(bad); err == nil || err.Error() != want {
			t.Errorf("Parse(%q) = %v, want %s", bad, err, want)
		}
	}
	if c, err := Parse(""); err != nil || c != (Conf{}) || c.String() != "" {
		t.Errorf("empty: %+v %v", c, err)
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{EnvGeneric: "expandable_segments:True"}
	if n, v := FromEnv(func(k string) string { return env[k] }); n != EnvGeneric || v != "expandable_segments:True" {
		t.Errorf("generic: %s %s", n, v)
	}
	env[EnvCUDA] = "max_split_size_mb:64"
	if n, _ := FromEnv(func(k string) string { return env[k] }); n != EnvGeneric {
		t.Errorf("both set: %s, want the one torch >= 2.9 reads", n)
	}
	delete(env, EnvGeneric)
	if n, _ := FromEnv(func(k string) string { return env[k] }); n != EnvCUDA {
		t.Errorf("cuda alone: %s", n)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("expandable_segments:True,roundup_power2_divisions:[256:1,512:2,>:4]")
	f.Add("max_split_size_mb:512,per_process_memory_fraction:0.9")
	f.Add("roundup_power2_divisions:[256:1,512:2,>:4]")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			return
		}
		if c.MaxSplit < 0 || c.Fraction < 0 || c.Fraction > 1 {
			t.Errorf("%q: %+v", s, c)
		}
		if _, err := Parse(c.String()); err != nil {
			t.Errorf("%q: String %q does not parse: %v", s, c.String(), err)
		}
	})
}

// TestGCIdle: garbage_collection_threshold acts only under a memory
// fraction, on segments that are not expandable, with the native backend.
func TestGCIdle(t *testing.T) {
	for conf, want := range map[string][2]string{
		"max_split_size_mb:128":                                            {"", ""},
		"garbage_collection_threshold:0.6,max_split_size_mb:128":           {GCNoFraction, ""},
		"garbage_collection_threshold:0.6,expandable_segments:True":        {GCExpandable, GCExpandable},
		"garbage_collection_threshold:0.6,backend:cudaMallocAsync":         {GCAsync, GCAsync},
		"garbage_collection_threshold:0.6,per_process_memory_fraction:0.5": {"", ""},
	} {
		c, err := Parse(conf)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.GCIdle(); got != want[0] {
			t.Errorf("%s: GCIdle %q, want %q", conf, got, want[0])
		}
		c.Fraction = 0.5 // the program sets a fraction
		if got := c.GCIdle(); got != want[1] {
			t.Errorf("%s with a fraction: GCIdle %q, want %q", conf, got, want[1])
		}
	}
}
