package oomexplain

// A container runtime's account of a dead container (real forms: corpus
// host/030, an OpenPAI job status quoting the Kubernetes pod status;
// host/035, `docker inspect` State):
//
//	Pod failed: ... containers: - name: app reason: OOMKilled message: "..." code: 137
//	    Last State:     Terminated
//	      Reason:       OOMKilled                      (kubectl describe pod)
//	      Exit Code:    137
//	train-0   0/1     OOMKilled   3          5m        (kubectl get pods)
//	"ExitCode": 137, ... "OOMKilled": false,           (docker inspect, any key order)
//
// OOMKilled true: the container's memory cgroup hit its limit. Exit code
// 137 (128 + SIGKILL) with OOMKilled false or unsaid: something killed
// it, the runtime does not say its own limit did. The facts of one status
// come on nearby lines in either order; they are joined.

import (
	"regexp"
	"strconv"
	"strings"
)

// containerLines: the lines of one status (kubectl describe's State
// block, docker inspect's State object) are this close together.
const containerLines = 12

var (
	reCtrReason   = regexp.MustCompile(`(?i:reason)"?\s*:\s*"?OOMKilled\b`)
	reCtrOOMFlag  = regexp.MustCompile(`"?OOMKilled"?\s*:\s*(true|false)\b`)
	reCtrKubectl  = regexp.MustCompile(`^\S+\s+\d+/\d+\s+OOMKilled\s+\d+`)
	reCtrExitCode = regexp.MustCompile(`(?:ExitCode|exitCode|Exit Code|\bcode)"?\s*:\s*(-?\d+)`)
)

// containerState joins the facts of one status.
type containerState struct {
	no   int       // line of the last fact
	inc  *Incident // the incident they made, once decisive
	exit *int      // facts seen before it was decisive
	oom  *bool
}

// containerFacts reads one line: the runtime's OOMKilled and exit code.
func containerFacts(t string) (oom *bool, exit *int) {
	switch {
	case reCtrReason.MatchString(t), reCtrKubectl.MatchString(t):
		oom = boolPtr(true)
	default:
		if m := reCtrOOMFlag.FindStringSubmatch(t); m != nil {
			oom = boolPtr(m[1] == "true")
		}
	}
	if m := reCtrExitCode.FindStringSubmatch(t); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			exit = &n
		}
	}
	return oom, exit
}

func containerLine(t string) bool {
	return strings.Contains(t, "OOMKilled") || strings.Contains(t, "xitCode") || strings.Contains(t, "xit Code")
}

// container records a status once it is decisive (OOMKilled true, or
// exit code 137) and adds later facts of the same status to it.
func (h *hostParser) container(l *line, t string) {
	oom, exit := containerFacts(t)
	if oom == nil && exit == nil {
		return
	}
	c := &h.ctr
	near := c.no > 0 && l.no-c.no <= containerLines
	if near && c.inc != nil {
		f := c.inc.Failure
		if (oom == nil || f.OOMKilled == nil) && (exit == nil || f.ExitCode == nil) {
			f.OOMKilled, f.ExitCode = firstBool(f.OOMKilled, oom), firstInt(f.ExitCode, exit)
			setKillSignal(f)
			c.no = l.no
			return
		}
	}
	if near && c.inc == nil {
		oom, exit = firstBool(oom, c.oom), firstInt(exit, c.exit)
	}
	*c = containerState{no: l.no, oom: oom, exit: exit}
	if (oom == nil || !*oom) && (exit == nil || *exit != 137) {
		return // not decisive (yet): "Exit Code: 0", "OOMKilled": false alone
	}
	f := &HostFailure{ExitCode: exit, OOMKilled: oom, Message: t}
	setKillSignal(f)
	c.inc = h.add(l, KindContainerKilled, f, nil)
}

// setKillSignal: exit code 137 is 128 + SIGKILL.
func setKillSignal(f *HostFailure) {
	if f.ExitCode != nil && *f.ExitCode == 137 {
		f.Signal, f.SignalNumber = "SIGKILL", intPtr(9)
	}
}

func boolPtr(b bool) *bool { return &b }

func firstBool(a, b *bool) *bool {
	if a != nil {
		return a
	}
	return b
}

func firstInt(a, b *int) *int {
	if a != nil {
		return a
	}
	return b
}
