package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/torchmem/torchmem/internal/policy"
)

// The exec and notify actions reach outside torchmem (a user's command, a
// local listener), so they run on a goroutine with a deadline and report
// back through a channel the loop drains at each sample: a slow command or
// a listener that does not answer never delays sampling, other rules or
// the kill.
const (
	// ExecTimeout bounds an exec action's command; its process group is
	// SIGKILLed after it.
	ExecTimeout = 10 * time.Second
	// NotifyTimeout bounds a notify action's connect, write and answer.
	NotifyTimeout = 2 * time.Second
	// actionOutputMax is how much of a command's output its event keeps.
	actionOutputMax = 4 << 10
)

// externalActions are the exec and notify actions in flight.
type externalActions struct {
	done    chan actionResult
	running map[int]bool // by rule index: one at a time per rule
}

// actionResult is how one exec or notify action ended.
type actionResult struct {
	index  int
	rule   policy.Rule
	at     time.Time
	msg    string
	output string
}

// notifyBody is what notify sends: one JSON object (one line on a FIFO).
type notifyBody struct {
	RunID     string  `json:"run_id"`
	Rule      string  `json:"rule"`
	Metric    string  `json:"metric"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	Time      string  `json:"time"`
}

// runID is the run's id (Config.RunID, else from the cgroup's name).
func (s *sup) runID() string {
	if s.cfg.RunID != "" {
		return s.cfg.RunID
	}
	return strings.TrimPrefix(s.cfg.CgroupName, "run-")
}

// external starts an exec or notify action and returns at once with the
// text for its event; false when the rule's previous one is still running.
func (s *sup) external(now time.Time, d policy.Decision) (string, bool) {
	x := &s.in.ext
	if x.done == nil {
		x.done, x.running = make(chan actionResult, 16), map[int]bool{}
	}
	if x.running[d.Index] {
		return "; the previous " + d.Rule.Action + " of this rule is still running: skipped", false
	}
	x.running[d.Index] = true
	body := notifyBody{RunID: s.runID(), Rule: d.Rule.Name, Metric: d.Rule.Metric, Value: d.Value,
		Threshold: d.Rule.Threshold, Time: now.UTC().Format(time.RFC3339Nano)}
	env := append(os.Environ(), "TORCHMEM_RUN_ID="+body.RunID, "TORCHMEM_RULE="+body.Rule,
		"TORCHMEM_METRIC="+body.Metric, "TORCHMEM_VALUE="+strconv.FormatFloat(d.Value, 'g', -1, 64),
		"TORCHMEM_THRESHOLD="+strconv.FormatFloat(d.Rule.Threshold, 'g', -1, 64))
	done, now_ := x.done, s.now
	go func() {
		res := actionResult{index: d.Index, rule: d.Rule}
		if d.Rule.Action == policy.Exec {
			res.msg, res.output = runExecFor(d.Rule.Target, env, ExecTimeout)
		} else {
			res.msg = notify(d.Rule.Target, body)
		}
		res.at = now_()
		done <- res
	}()
	if d.Rule.Action == policy.Exec {
		return "; running " + d.Rule.Target, true
	}
	return "; notifying " + d.Rule.Target, true
}

// drainActions records the exec and notify actions that ended since the
// last sample.
func (s *sup) drainActions() {
	x := &s.in.ext
	for {
		select {
		case r := <-x.done:
			delete(x.running, r.index)
			data := map[string]any{"rule": r.rule.String()}
			if r.output != "" {
				data["output"] = r.output
			}
			s.event(r.at, r.rule.Action+"_done", "policy", 0, r.rule.Name+": "+r.msg, data)
			if !strings.HasPrefix(r.msg, "exited 0") && !strings.HasPrefix(r.msg, "delivered") {
				s.notice(tr(s.lang())("notice.action_failed", r.rule.Action, r.rule.Name, r.msg))
			}
		default:
			return
		}
	}
}

// runExecFor runs cmd with sh -c in its own process group for at most
// timeout; its stdin is /dev/null, its output kept up to actionOutputMax.
func runExecFor(cmd string, env []string, timeout time.Duration) (msg, output string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	c.Env = env
	var out capped
	c.Stdout, c.Stderr = &out, &out
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second // a background child holding the pipe
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		msg = fmt.Sprintf("killed after %s", timeout)
	case errors.As(err, &ee):
		msg = "exited " + strings.TrimPrefix(ee.ProcessState.String(), "exit status ")
	case err != nil:
		msg = "failed: " + err.Error()
	default:
		msg = "exited 0"
	}
	return msg, out.String()
}

// notify sends body to target (policy.NotifyTarget) within NotifyTimeout.
func notify(target string, body notifyBody) string {
	kind, addr, err := policy.NotifyTarget(target)
	if err != nil {
		return "failed: " + err.Error()
	}
	b, _ := json.Marshal(body)
	if kind == policy.NotifyFIFO {
		return writeFIFO(addr, append(b, '\n'))
	}
	client := &http.Client{Timeout: NotifyTimeout}
	url := addr
	if kind == policy.NotifyUnix {
		client.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}}
		url = "http://unix/"
	}
	resp, err := client.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		return "failed: " + err.Error()
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "failed: " + resp.Status
	}
	return "delivered (" + resp.Status + ")"
}

// writeFIFO writes line to the named pipe at path without blocking: no
// reader (ENXIO) or a full pipe (EAGAIN) is a failure, not a wait; a path
// that is not a pipe is refused, so a typo never creates or appends to a
// file.
func writeFIFO(path string, line []byte) string {
	st, err := os.Stat(path)
	if err != nil {
		return "failed: " + err.Error()
	}
	if st.Mode()&os.ModeNamedPipe == 0 {
		return "failed: " + path + " is not a FIFO"
	}
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return "failed: nobody is reading " + path
	}
	if err != nil {
		return "failed: " + err.Error()
	}
	defer f.Close()
	if _, err := f.Write(line); err != nil {
		return "failed: write " + path + ": " + err.Error()
	}
	return "delivered"
}

// capped keeps the first actionOutputMax bytes written to it.
type capped struct{ b bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := actionOutputMax - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string { return strings.TrimRight(c.b.String(), "\n") }
