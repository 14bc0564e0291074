package web

import (
	"fmt"
	"net/http"
	"time"
)

// keepAliveEvery is how often an idle live stream sends a comment, and
// streamWriteTimeout how long one write to it may take.
const (
	keepAliveEvery     = 15 * time.Second
	streamWriteTimeout = 30 * time.Second
)

// apiStream sends the node state as server-sent events ("event: node"),
// one per sample, plus a comment every 15 s so proxies keep it open.
func (s *Server) apiStream(w http.ResponseWriter, r *http.Request) {
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		http.Error(w, "503: too many live streams", http.StatusServiceUnavailable)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	fmt.Fprintf(w, "retry: %d\n\n", (2 * s.cfg.Interval).Milliseconds())
	keep, stop := s.ticker(keepAliveEvery)
	defer stop()
	for {
		b, changed := s.nodeBytes()
		// The server's WriteTimeout is for ordinary answers; a stream
		// pushes its deadline forward at each write instead. Deadlines are
		// the real clock's (the kernel checks them), never Config.Now.
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if b != nil {
			if _, err := fmt.Fprintf(w, "event: node\ndata: %s\n\n", b); err != nil {
				return
			}
		}
		if rc.Flush() != nil {
			return
		}
		if !s.wait(w, r, changed, keep, rc) {
			return
		}
	}
}

// wait blocks until the next sample, sending keep-alives meanwhile; false
// when the client went away.
func (s *Server) wait(w http.ResponseWriter, r *http.Request, changed chan struct{}, keep <-chan time.Time, rc *http.ResponseController) bool {
	for {
		select {
		case <-r.Context().Done():
			return false
		case <-changed:
			return true
		case <-keep:
			_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return false
			}
		}
	}
}
