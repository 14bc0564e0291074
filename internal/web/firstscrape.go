package web

import (
	"net/http"
	"time"
)

// DefaultFirstScrapeWait bounds how long a request made before the first
// sample waits for it. The first sample reads every process's PSS
// (~5 ms each, in parallel), so a 200-process node is ready in well
// under a second; a Prometheus scrape times out after 10 s by default.
const DefaultFirstScrapeWait = 10 * time.Second

// markReady records that the first sample is published; later calls do
// nothing.
func (s *Server) markReady() { s.readyOnce.Do(func() { close(s.ready) }) }

// waitFirst holds a request until the first sample is published, at most
// Config.FirstScrapeWait, so that the first scrape after the agent
// starts (Prometheus scrapes new targets at once) has every source's
// series instead of torchmem_scrape_success 0 and nothing else. Past the
// wait, or when the client gives up, it answers with what there is.
func (s *Server) waitFirst(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-s.ready:
		default:
			t := time.NewTimer(s.cfg.FirstScrapeWait)
			select {
			case <-s.ready:
			case <-t.C:
			case <-r.Context().Done():
			}
			t.Stop()
		}
		h.ServeHTTP(w, r)
	})
}
