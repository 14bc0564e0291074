package gpu

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// procTree writes status files with the given NSpid lines, and pid
// namespace links, under a fresh procRoot.
func procTree(t *testing.T, self string, selfNS string, procs map[string][2]string) string {
	t.Helper()
	root := t.TempDir()
	write := func(dir, nspid, ns string) {
		status := "Name:\tpython3\n"
		if nspid != "" {
			status += "NSpid:\t" + nspid + "\n"
		}
		writeFile(t, filepath.Join(root, dir, "status"), status)
		if ns != "" {
			if err := os.MkdirAll(filepath.Join(root, dir, "ns"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(ns, filepath.Join(root, dir, "ns", "pid")); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("self", self, selfNS)
	for dir, v := range procs {
		write(dir, v[0], v[1])
	}
	return root
}

func TestPIDMapper(t *testing.T) {
	const ours, other = "pid:[4026532500]", "pid:[4026532600]"
	tests := []struct {
		name         string
		self, selfNS string
		procs        map[string][2]string
		want         []Process
	}{
		{"host", "900", initPIDNamespace, nil,
			[]Process{{HostPID: 517, PID: 517}, {HostPID: 4242, PID: 4242}}},
		{"host, kernel without NSpid or ns links", "", "", nil,
			[]Process{{HostPID: 517, PID: 517}, {HostPID: 4242, PID: 4242}}},
		{"container with its own /proc", "12", ours, nil,
			[]Process{{HostPID: 517, Unmapped: true}, {HostPID: 4242, Unmapped: true}}},
		{"container reading the host's /proc", "48000\t12", ours,
			map[string][2]string{"517": {"517\t7", ours}, "4242": {"4242\t3", other}},
			[]Process{{HostPID: 517, PID: 7}, {HostPID: 4242, Unmapped: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newPIDMapper(procTree(t, tt.self, tt.selfNS, tt.procs))
			got := []Process{{HostPID: 517}, {HostPID: 4242}}
			m.Map(got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v want %+v", got, tt.want)
			}
		})
	}
}

func TestParseNSpid(t *testing.T) {
	status := readFixture(t, "proc-pid-status-during-train.txt")
	if got := parseNSpid(status); !reflect.DeepEqual(got, []int{517}) {
		t.Errorf("recorded status: %v", got)
	}
	for in, want := range map[string][]int{"NSpid:\t48211\t17\n": {48211, 17}, "Pid:\t5\n": nil, "NSpid:\tx\n": nil, "NSpid:\t-3\n": nil} {
		if got := parseNSpid(in); !reflect.DeepEqual(got, want) {
			t.Errorf("parseNSpid(%q) = %v", in, got)
		}
	}
}
