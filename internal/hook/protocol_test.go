package hook

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func itoa(n int) string { return strconv.Itoa(n) }

func TestParseLine(t *testing.T) {
	cases := []struct {
		line string
		typ  string
		bad  bool
	}{
		{`{"v":1,"type":"hello","pid":4242,"ppid":1,"rank":0,"worker":false,"torch":"1.13.0","python":"3.11.2","step_hook":"wrapped"}`, TypeHello, false},
		{`{"v":1,"type":"stats","t":1.5,"step":3,"cuda_initialized":true,"devices":[{"device":0,"allocated":1582062080,"reserved":3435134976}]}`, TypeStats, false},
		{`{"v":1,"type":"step","t":1.5,"step":4,"steps":2,"step_seconds":0.05,"cuda_initialized":false}`, TypeStep, false},
		{`{"v":1,"type":"oom","t":1,"device":0,"alloc":400000286720,"device_alloc":150109880320,"device_free":147061866496}`, TypeOOM, false},
		{`{"v":2,"type":"future","x":1}`, "future", false},
		{`{"type":"hello"}`, "", true},
		{`{"v":1}`, "", true},
		{`{"v":1,"type":"stats","devices":"nope"}`, "", true},
		{`not json`, "", true},
	}
	for _, c := range cases {
		m, err := ParseLine([]byte(c.line))
		if c.bad {
			if !errors.Is(err, ErrBadLine) {
				t.Errorf("%s: err %v, want ErrBadLine", c.line, err)
			}
			continue
		}
		if err != nil || m.Type != c.typ {
			t.Errorf("%s: %+v, %v", c.line, m, err)
		}
	}
	m, _ := ParseLine([]byte(cases[1].line))
	if d := m.Stats.Devices[0]; d.Reserved != 3435134976 || *m.Stats.Step != 3 {
		t.Errorf("stats decoded as %+v", m.Stats)
	}
	m, _ = ParseLine([]byte(cases[0].line))
	if m.Hello.Rank == nil || *m.Hello.Rank != 0 || m.Hello.LocalRank != nil {
		t.Errorf("hello ranks %+v", m.Hello)
	}
}

func TestEncodeCommand(t *testing.T) {
	b, err := EncodeCommand(Command{Type: CmdSnapshot, ID: 3, Path: "/x/{pid}.pickle"})
	if err != nil || string(b) != `{"v":1,"type":"snapshot","id":3,"path":"/x/{pid}.pickle"}`+"\n" {
		t.Fatalf("%s %v", b, err)
	}
	if _, err := EncodeCommand(Command{Type: CmdSnapshot}); err == nil {
		t.Fatal("snapshot without path accepted")
	}
	if _, err := EncodeCommand(Command{Type: "rm -rf"}); err == nil {
		t.Fatal("unknown command accepted")
	}
}

func TestMergeEnv(t *testing.T) {
	got := MergeEnv([]string{"A=1", "PYTHONPATH=/user/lib", "B=2"}, []string{"PYTHONPATH=/hook", "B=3", "C=4"})
	want := "A=1 PYTHONPATH=/hook:/user/lib B=3 C=4"
	if strings.Join(got, " ") != want {
		t.Fatalf("got %v", got)
	}
	got = MergeEnv([]string{"PYTHONPATH="}, []string{"PYTHONPATH=/hook"})
	if strings.Join(got, " ") != "PYTHONPATH=/hook" {
		t.Fatalf("empty PYTHONPATH: %v", got)
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"hello","pid":1}`))
	f.Add([]byte(`{"v":1,"type":"stats","devices":[{"device":0}]}`))
	f.Add([]byte(`{"v":1,"type":"exception","text":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseLine(b)
		if err == nil && m.Type == "" {
			t.Fatal("message without type accepted")
		}
	})
}
