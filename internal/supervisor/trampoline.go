package supervisor

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
	"golang.org/x/text/language"
)

// TrampolineArg is the hidden first argument that makes torchmem act as the
// job's trampoline: the supervisor starts itself with it, puts the new
// process in the job's cgroup, then sends the plan on fd 3; the trampoline
// applies what must be set from inside (NUMA binding, rlimits) and execs
// the job. Until the plan arrives the job's command has not started, so no
// allocation escapes the cgroup.
const TrampolineArg = "__torchmem-exec"

// plan is what the supervisor sends the trampoline (JSON on fd 3).
type plan struct {
	Argv []string `json:"argv"`
	// Numactl: the numactl binary to exec through; empty to bind ourselves.
	Numactl string `json:"numactl,omitempty"`
	// NUMANode to bind CPUs and memory to; -1 for no binding.
	NUMANode int     `json:"numa_node"`
	CPUs     []int   `json:"cpus,omitempty"` // CPUs of NUMANode (own binding)
	NProc    *uint64 `json:"nproc,omitempty"`
	NoFile   *uint64 `json:"nofile,omitempty"`
	// Lang is the run's language ("zh"), for the child's own errors.
	Lang string `json:"lang,omitempty"`
}

// Trampoline is the child side. It returns only on failure, with the exit
// status bash would give for it (127 not found, 126 cannot execute, as
// execstatus.go lists); errors are written to stderr.
func Trampoline(stderr io.Writer) int {
	f := os.NewFile(3, "torchmem-plan")
	b, err := io.ReadAll(f)
	f.Close()
	var p plan
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil || len(p.Argv) == 0 {
		fmt.Fprintf(stderr, "torchmem: no job plan from the supervisor (%v)\n", err)
		return 126
	}
	// Affinity and memory policy are per thread and inherited by exec from
	// the thread that calls it: bind and exec on one locked thread.
	runtime.LockOSThread()
	if err := applyLimits(p); err != nil {
		fmt.Fprintf(stderr, "torchmem: %v\n", err)
		return 126
	}
	argv := p.Argv
	if p.NUMANode >= 0 && p.Numactl != "" {
		node := fmt.Sprint(p.NUMANode)
		argv = append([]string{p.Numactl, "--cpunodebind=" + node, "--membind=" + node, "--"}, argv...)
	} else if p.NUMANode >= 0 {
		if err := bindNode(p.NUMANode, p.CPUs); err != nil {
			t := tr(language.Make(p.Lang))
			fmt.Fprintln(stderr, t("status.prefix")+t("notice.numa_skipped", err.Error()))
		}
	}
	return execJob(argv, stderr, tr(language.Make(p.Lang)))
}

// execJob finds and execs argv as bash would; it returns only on failure,
// with bash's status for it (see execstatus.go).
func execJob(argv []string, stderr io.Writer, t func(string, ...any) string) int {
	path, ok := lookCommand(argv[0], os.Getenv("PATH"), probeFile)
	if !ok {
		fmt.Fprintln(stderr, t("status.prefix")+t("notice.not_found", argv[0]))
		return 127
	}
	err := syscall.Exec(path, argv, os.Environ())
	out := execFailed(err, probeFile(path), readSample(path))
	if out.Script {
		// A text file without #!: bash runs it as a shell script, as
		// execvp does with /bin/sh.
		sh := append([]string{"/bin/sh", path}, argv[1:]...)
		err = syscall.Exec(sh[0], sh, os.Environ())
		out = execOutcome{Code: 126, Reason: "run with /bin/sh: " + err.Error()}
	}
	if out.Reason != "" {
		fmt.Fprintf(stderr, "torchmem: %s: %s\n", path, out.Reason)
	}
	return out.Code
}

func applyLimits(p plan) error {
	for _, l := range []struct {
		name string
		res  int
		v    *uint64
	}{{"nproc", unix.RLIMIT_NPROC, p.NProc}, {"nofile", unix.RLIMIT_NOFILE, p.NoFile}} {
		if l.v == nil {
			continue
		}
		// syscall.Setrlimit (not x/sys) so the runtime forgets the NOFILE
		// soft limit it would otherwise restore at exec.
		if err := syscall.Setrlimit(l.res, &syscall.Rlimit{Cur: *l.v, Max: *l.v}); err != nil {
			return fmt.Errorf("setrlimit %s=%d: %w", l.name, *l.v, err)
		}
	}
	return nil
}

// bindNode is what numactl --cpunodebind=N --membind=N does, for hosts
// without numactl: sched_setaffinity to the node's CPUs and
// set_mempolicy(MPOL_BIND, {N}).
func bindNode(node int, cpus []int) error {
	if len(cpus) > 0 {
		var set unix.CPUSet
		for _, c := range cpus {
			set.Set(c)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("sched_setaffinity: %w", err)
		}
	}
	const mpolBind = 2
	var mask [16]uint64 // 1024 nodes
	if node >= len(mask)*64 {
		return fmt.Errorf("node %d out of range", node)
	}
	mask[node/64] |= 1 << (node % 64)
	_, _, e := unix.Syscall(unix.SYS_SET_MEMPOLICY, mpolBind, uintptr(unsafe.Pointer(&mask[0])), uintptr(len(mask)*64))
	if e != 0 {
		return fmt.Errorf("set_mempolicy: %w", e)
	}
	return nil
}
