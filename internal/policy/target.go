package policy

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// checkTarget checks what follows "exec:" or "notify:" in a rule's action.
// notify only reaches this host: an http URL on a loopback address (or
// "localhost"), a unix:PATH socket (HTTP over it) or a fifo:PATH, so a
// policy file cannot make the supervisor post the job's numbers elsewhere
// and a slow remote cannot hold an action open.
func checkTarget(action, target string) error {
	switch action {
	case Exec:
		if strings.TrimSpace(target) == "" {
			return errors.New("action exec needs a command (exec:CMD)")
		}
		return nil
	case Notify:
		_, _, err := NotifyTarget(target)
		return err
	}
	if target != "" {
		return fmt.Errorf("action %s takes no target (%s:%s)", action, action, target)
	}
	return nil
}

// Notify target kinds, as NotifyTarget returns them.
const (
	NotifyHTTP = "http" // POST to a loopback http URL
	NotifyUnix = "unix" // POST over a unix socket at a path
	NotifyFIFO = "fifo" // one line written to a named pipe
)

// NotifyTarget splits a notify target into its kind and address (the URL,
// or the socket's or pipe's path).
func NotifyTarget(target string) (kind, addr string, err error) {
	if p, ok := strings.CutPrefix(target, "fifo:"); ok && p != "" {
		return NotifyFIFO, p, nil
	}
	if p, ok := strings.CutPrefix(target, "unix:"); ok && p != "" {
		return NotifyUnix, p, nil
	}
	u, perr := url.Parse(target)
	if perr != nil || u.Scheme != "http" || u.Host == "" {
		return "", "", fmt.Errorf("notify target %q: want http://127.0.0.1:PORT/..., unix:PATH or fifo:PATH", target)
	}
	if h := u.Hostname(); h != "localhost" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return "", "", fmt.Errorf("notify target %q: only loopback addresses (127.0.0.1, ::1, localhost)", target)
		}
	}
	return NotifyHTTP, target, nil
}
