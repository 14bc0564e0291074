package units

import (
	"math"
	"testing"
)

func TestParseBytes(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"123", 123, true}, {"200M", 200 << 20, true}, {"64G", 64 << 30, true},
		{"1.5GiB", 1536 << 20, true}, {"512 MB", 512e6, true}, {"24GiB", 24 << 30, true},
		{"max", math.MaxInt64, true}, {"10k", 10240, true},
		{"", 0, false}, {"abc", 0, false}, {"-5M", 0, false}, {"1e400G", 0, false},
	}
	for _, c := range cases {
		got, err := ParseBytes(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]float64{"90%": 0.9, "90": 0.9, "0.5": 0.5, "100%": 1} {
		got, err := ParsePercent(in)
		if err != nil || math.Abs(got-want) > 1e-9 {
			t.Errorf("ParsePercent(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParsePercent("150%"); err == nil {
		t.Error("150% accepted")
	}
}

func TestFormat(t *testing.T) {
	if got := Bytes(1536 << 20); got != "1.50 GiB" {
		t.Errorf("Bytes = %q", got)
	}
	if got := Bytes(512); got != "512 B" {
		t.Errorf("Bytes = %q", got)
	}
	if got := Short(133 << 20); got != "133M" {
		t.Errorf("Short = %q", got)
	}
}
