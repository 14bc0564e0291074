package webassets

import (
	"fmt"
	"testing"
	"time"
)

func p(v float64) *float64 { return &v }

func show(x []float64, col []*float64) string {
	s := ""
	for i := range x {
		if col[i] == nil {
			s += fmt.Sprintf("%g:- ", x[i])
		} else {
			s += fmt.Sprintf("%g:%g ", x[i], *col[i])
		}
	}
	return s
}

// TestGaps: the fill rule on the shape of a real run (samples every 1 s,
// PSS read every 5 s and stored only when read: thzmnh, the leak demo).
func TestGaps(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
	pss := []*float64{p(1), nil, nil, nil, nil, p(2), nil, nil, nil, nil, nil, nil, nil, nil}
	cg := []*float64{p(10), p(11), p(12), p(13), p(14), p(15), p(16), p(17), p(18), p(19), p(20), p(21), p(22), p(23)}
	periods := []time.Duration{0, 5 * time.Second}
	for _, c := range []struct {
		name          string
		x             []float64
		breaks        []float64
		wantCG, wantP string
	}{
		{"carried at most 2 periods", x, nil,
			"0:10 1:11 2:12 3:13 4:14 5:15 6:16 7:17 8:18 9:19 10:20 11:21 12:22 13:23 ",
			"0:1 1:1 2:1 3:1 4:1 5:2 6:2 7:2 8:2 9:2 10:2 11:2 12:2 13:2 "},
		{"an OOM stops the carry and breaks every line", x, []float64{7.5},
			"0:10 1:11 2:12 3:13 4:14 5:15 6:16 7:17 7.5:- 8:18 9:19 10:20 11:21 12:22 13:23 ",
			"0:1 1:1 2:1 3:1 4:1 5:2 6:2 7:2 7.5:- 8:- 9:- 10:- 11:- 12:- 13:- "},
	} {
		nx, cols := Gaps(c.x, [][]*float64{cg, pss}, periods, c.breaks)
		if got := show(nx, cols[0]); got != c.wantCG {
			t.Errorf("%s: cgroup\n got %s\nwant %s", c.name, got, c.wantCG)
		}
		if got := show(nx, cols[1]); got != c.wantP {
			t.Errorf("%s: pss\n got %s\nwant %s", c.name, got, c.wantP)
		}
	}
	if pss[1] != nil {
		t.Fatal("Gaps modified its input")
	}
}

// TestGapsCarryLimit: a read older than CarryLimit is not carried, and a
// gap in sampling (the sampler stopped for 20 s) is a null row.
func TestGapsCarryLimit(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 32, 33}
	col := make([]*float64, len(x))
	col[0], col[14] = p(1), p(3)
	fast := make([]*float64, len(x))
	for i := range fast {
		fast[i] = p(float64(i))
	}
	nx, cols := Gaps(x, [][]*float64{col, fast}, []time.Duration{5 * time.Second, 0}, nil)
	want := "0:1 1:1 2:1 3:1 4:1 5:1 6:1 7:1 8:1 9:1 10:1 11:- 12:- 22:- 32:- 33:3 "
	if got := show(nx, cols[0]); got != want {
		t.Errorf("slow\n got %s\nwant %s", got, want)
	}
	if got := show(nx, cols[1]); got != "0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7 8:8 9:9 10:10 11:11 12:12 22:- 32:13 33:14 " {
		t.Errorf("fast: %s", got)
	}
	if nx, _ := Gaps(nil, nil, nil, []float64{1}); len(nx) != 0 {
		t.Error("empty")
	}
}
