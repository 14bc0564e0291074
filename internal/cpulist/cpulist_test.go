package cpulist

import (
	"fmt"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]string{
		"0-3,8,10-11": "[0 1 2 3 8 10 11]", "5": "[5]", "": "[]", " 0-1\n": "[0 1]",
		"0-1,32-33": "[0 1 32 33]", "0-15": "[0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]",
	} {
		got, err := Parse(in)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"a", "3-1", "1-", "0-", "-1", "0-65535,0-65535", "0-9223372036854775807"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// Large ranges used to add 65,536 CPUs each: the total is bounded.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0-3,8,10-11", "0-15", "0-1,32-33", "7", "", "0-65535,0-65535", "-1", "3-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := Parse(s)
		if err == nil && len(cpus) > Max {
			t.Fatalf("%q: %d cpus", s, len(cpus))
		}
	})
}
