package web

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/webassets"
)

// static holds the dashboard: three pages and their script and style.
//
//go:embed static
var static embed.FS

// assetsModTime is the assets' modification time: the binary's start, so caches
// revalidate after an upgrade.
var assetsModTime = time.Now()

func (s *Server) pages(mux *http.ServeMux) {
	page := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { serveStatic(w, r, "static/"+name) }
	}
	mux.HandleFunc("GET /{$}", page("node.html"))
	mux.HandleFunc("GET /runs", page("runs.html"))
	mux.HandleFunc("GET /runs/{id}", page("run.html"))
	mux.HandleFunc("GET /static/uPlot.iife.min.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		http.ServeContent(w, r, "", assetsModTime, strings.NewReader(webassets.UPlotJS))
	})
	mux.HandleFunc("GET /static/uPlot.min.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		http.ServeContent(w, r, "", assetsModTime, strings.NewReader(webassets.UPlotCSS))
	})
	mux.HandleFunc("GET /static/{file}", func(w http.ResponseWriter, r *http.Request) {
		serveStatic(w, r, "static/"+r.PathValue("file"))
	})
}

func serveStatic(w http.ResponseWriter, r *http.Request, name string) {
	b, err := fs.ReadFile(static, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	switch {
	case strings.HasSuffix(name, ".html"):
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	case strings.HasSuffix(name, ".js"):
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	}
	http.ServeContent(w, r, "", assetsModTime, strings.NewReader(string(b)))
}
