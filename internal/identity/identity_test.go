package identity

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json")

// cgroupLine picks the path a process's memory is charged to, as
// internal/cgroup.ParseProcessPath does (the v1 memory line, else the v2
// line); a file with neither (a partial capture) gives its first line's.
func cgroupLine(t *testing.T, text string) string {
	t.Helper()
	var v2, first string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			t.Fatalf("bad line %q", line)
		}
		if first == "" {
			first = parts[2]
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				return parts[2]
			}
		}
	}
	if v2 != "" {
		return v2
	}
	return first
}

type goldenCase struct {
	Key      string   `json:"key"`
	Short    string   `json:"short"`
	Identity Identity `json:"identity"`
}

// TestFixtureTree resolves every captured /proc/<pid>/cgroup (and
// environ, where there is one) under testdata/proc and compares with
// testdata/golden.json; sources are in testdata/README.md.
func TestFixtureTree(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join("testdata", "proc"))
	if err != nil {
		t.Fatal(err)
	}
	r := NewResolver(ResolverOptions{})
	got := map[string]goldenCase{}
	for _, d := range dirs {
		dir := filepath.Join("testdata", "proc", d.Name())
		cg, err := os.ReadFile(filepath.Join(dir, "cgroup"))
		if err != nil {
			t.Fatal(err)
		}
		env, _ := os.ReadFile(filepath.Join(dir, "environ"))
		id := r.Resolve(context.Background(), Input{CgroupPath: cgroupLine(t, string(cg)), Environ: env})
		got[d.Name()] = goldenCase{Key: id.Key(), Short: id.Short(), Identity: id}
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", "golden.json")
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("golden.json differs (-update to accept):\n%s", b)
	}
	// The facts the golden file must keep, whatever else changes.
	for name, key := range map[string]string{
		"k8s-cgroupfs-v1-besteffort":        "pod:18d34ce4-50c7-452c-9df8-53c4a3fdf363",
		"k8s-systemd-v2-containerd":         "pod:55c6c714-b240-4dec-9a45-57b61696ab6e",
		"k8s-systemd-v2-static-pod":         "pod:8daa50c3a64c9ff60bb9eab7b44b56fd",
		"k8s-systemd-v1-containerd-service": "pod:7a875b5c-4d3c-4345-ac0f-5c847d8d7129",
		"k8s-crio-in-docker":                "pod:2ca4a155-3599-498d-bb9d-4446693fa3ea",
		"slurm-v1":                          "slurm:4242.0",
		"slurm-v1-batch":                    "slurm:7.batch",
		"slurm-v2-nodename":                 "slurm:4242.batch",
		"slurm-environ-only":                "slurm:99.batch",
		"slurm-environ-forged":              "slurm:4242.0",
		"docker-cgroupfs-v1":                "container:5dace3de0735",
		"docker-v1-hybrid":                  "container:a2ffe0e97ac2",
		"podman-v2-root":                    "container:cf21d19260ac",
		"container-v2-namespaced":           "",
		"sandbox-v1":                        "",
	} {
		if got[name].Key != key {
			t.Errorf("%s: key %q, want %q", name, got[name].Key, key)
		}
	}
	if k := got["k8s-crio-in-docker"].Identity; k.Container == nil || k.Container.Runtime != "cri-o" || k.Kubernetes.QoS != "besteffort" {
		t.Errorf("pod in kind: %+v", k)
	}
	if s := got["slurm-v2-environ"].Identity.Slurm; s == nil || s.User != "alice" || s.Partition != "gpu" || s.UID == nil || *s.UID != 1000 {
		t.Errorf("slurm environ not merged: %+v", s)
	}
	if s := got["slurm-environ-forged"].Identity.Slurm; s.User != "" {
		t.Errorf("a forged SLURM_JOB_ID lent its user: %+v", s)
	}
}

func TestParseCgroupForms(t *testing.T) {
	for _, c := range []struct{ path, key, qos string }{
		// Guaranteed pods sit right under kubepods (cgroupfs) or kubepods.slice.
		{"/kubepods/pod18d34ce4-50c7-452c-9df8-53c4a3fdf363/a684bbdd0c4b6937b5ece9713bed661305ab0de570eb12b7c28a032aaf602937", "pod:18d34ce4-50c7-452c-9df8-53c4a3fdf363", "guaranteed"},
		{"/kubepods.slice/kubepods-pod18d34ce4_50c7_452c_9df8_53c4a3fdf363.slice/cri-containerd-a684bbdd0c4b6937b5ece9713bed661305ab0de570eb12b7c28a032aaf602937.scope", "pod:18d34ce4-50c7-452c-9df8-53c4a3fdf363", "guaranteed"},
		{"/system.slice/docker-5dace3de0735f73d2b5048f12d41a71741a02e49668de921fdae62f7e65dc498.scope", "container:5dace3de0735", ""},
		// Seen from an agent in its own cgroup namespace: ".." above its root.
		{"/../../../burstable/pod1ff47ee6-9685-4726-ac6f-0ff070c452d6/a684bbdd0c4b6937b5ece9713bed661305ab0de570eb12b7c28a032aaf602937", "pod:1ff47ee6-9685-4726-ac6f-0ff070c452d6", "burstable"},
		{"/../../kubepods-besteffort.slice/kubepods-besteffort-pod2ca4a155_3599_498d_bb9d_4446693fa3ea.slice/crio-358607a37e7ada357032e7f5729c9ae6a3efdb7962acbcbe47ff6a3c5506cb1c.scope", "pod:2ca4a155-3599-498d-bb9d-4446693fa3ea", "besteffort"},
		{"/system.slice/train.service", "unit:train.service", ""},
		{"/system.slice/containerd.service", "", ""},
		{"/user.slice/user-1000.slice/user@1000.service/app.slice", "", ""},
		// Look-alikes that are not pods or jobs.
		{"/podcast/pod18d34ce4-50c7-452c-9df8-53c4a3fdf363", "", ""},
		{"/slurm/job_12/step_0", "", ""},
		{"/slurm/uid_x/job_12", "", ""},
		{"/docker/abc", "", ""},
	} {
		id := ParseCgroup(c.path)
		if id.Key() != c.key {
			t.Errorf("%s: key %q, want %q", c.path, id.Key(), c.key)
		}
		if c.qos != "" && (id.Kubernetes == nil || id.Kubernetes.QoS != c.qos) {
			t.Errorf("%s: %+v, want QoS %s", c.path, id.Kubernetes, c.qos)
		}
	}
}

func TestParseEnviron(t *testing.T) {
	e := ParseEnviron([]byte("A=1\x00=x\x00noequals\x00SLURM_JOB_ID=12\x00SLURM_STEP_ID=4294967295\x00NVIDIA_VISIBLE_DEVICES=GPU-aa,1,MIG-bb,all\x00HOSTNAME=p\xff"))
	if e.Slurm == nil || e.Slurm.JobID != "12" || e.Slurm.Step != "extern" || e.Slurm.Source != "environ" {
		t.Errorf("slurm: %+v", e.Slurm)
	}
	if strings.Join(e.VisibleDevices, ",") != "GPU-aa,MIG-bb" {
		t.Errorf("devices: %v", e.VisibleDevices)
	}
	if e.Hostname != "p\uFFFD" {
		t.Errorf("hostname %q not repaired", e.Hostname)
	}
	if e := ParseEnviron([]byte("SLURM_JOB_ID=12;rm -rf")); e.Slurm != nil {
		t.Errorf("a non-numeric job id was kept: %+v", e.Slurm)
	}
	big := bytes.Repeat([]byte("X=1\x00"), MaxEnviron)
	if e := ParseEnviron(append(big, "SLURM_JOB_ID=5\x00"...)); e.Slurm != nil {
		t.Errorf("read past MaxEnviron")
	}
}

func FuzzParseCgroup(f *testing.F) {
	dirs, _ := os.ReadDir(filepath.Join("testdata", "proc"))
	for _, d := range dirs {
		if b, err := os.ReadFile(filepath.Join("testdata", "proc", d.Name(), "cgroup")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if parts := strings.SplitN(line, ":", 3); len(parts) == 3 {
					f.Add(parts[2])
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, path string) {
		id := ParseCgroup(path)
		if k := id.Key(); k != "" && id.Kind == "" && id.Unit == "" {
			t.Fatalf("key %q without a kind", k)
		}
		if id.Kubernetes != nil && !podUID(id.Kubernetes.PodUID) {
			t.Fatalf("bad pod uid %q", id.Kubernetes.PodUID)
		}
		if id.Container != nil && !isContainerID(id.Container.ID) {
			t.Fatalf("bad container id %q", id.Container.ID)
		}
	})
}

func FuzzParseEnviron(f *testing.F) {
	f.Add([]byte("SLURM_JOB_ID=4242\x00SLURM_STEP_ID=0\x00SLURM_JOB_USER=alice\x00"))
	f.Add([]byte("NVIDIA_VISIBLE_DEVICES=GPU-1,GPU-2\x00HOSTNAME=x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e := ParseEnviron(b)
		if e.Slurm != nil && (!isDigits(e.Slurm.JobID) || len(e.Slurm.User) > maxValue) {
			t.Fatalf("bad slurm %+v", e.Slurm)
		}
		_ = merge(ParseCgroup("/slurm/uid_1/job_2/step_0"), e)
	})
}
