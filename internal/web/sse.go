package web

import (
	"fmt"
	"net/http"
	"time"
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
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		b, changed := s.nodeBytes()
		// The server's WriteTimeout is for ordinary answers; a stream
		// pushes its deadline forward at each write instead.
		_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
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
func (s *Server) wait(w http.ResponseWriter, r *http.Request, changed chan struct{}, keep *time.Ticker, rc *http.ResponseController) bool {
	for {
		select {
		case <-r.Context().Done():
			return false
		case <-changed:
			return true
		case <-keep.C:
			_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return false
			}
		}
	}
}
