package web

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/webassets"
)

// static holds the dashboard: four pages, the layout they share, and their
// script and style.
//
//go:embed static
var static embed.FS

// dashboardPages names each page (static/<name>.html) and its script.
var dashboardPages = map[string]string{"node": "node.js", "run": "run.js", "runs": "run.js", "cluster": "cluster.js"}

func (s *Server) pages(mux *http.ServeMux) {
	rendered := map[language.Tag]map[string][]byte{i18n.EN: renderPages(i18n.EN), i18n.ZH: renderPages(i18n.ZH)}
	page := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Add("Vary", "Accept-Language")
			serveStatic(w, r, rendered[s.pageLang(r)], "static/"+name, s.modTime)
		}
	}
	mux.HandleFunc("GET /{$}", page("node.html"))
	mux.HandleFunc("GET /runs", page("runs.html"))
	mux.HandleFunc("GET /runs/{id}", page("run.html"))
	mux.HandleFunc("GET /cluster", page("cluster.html"))
	mux.HandleFunc("GET /static/uPlot.iife.min.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		http.ServeContent(w, r, "", s.modTime, strings.NewReader(webassets.UPlotJS))
	})
	mux.HandleFunc("GET /static/uPlot.min.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		http.ServeContent(w, r, "", s.modTime, strings.NewReader(webassets.UPlotCSS))
	})
	mux.HandleFunc("GET /static/{file}", func(w http.ResponseWriter, r *http.Request) {
		serveStatic(w, r, nil, "static/"+r.PathValue("file"), s.modTime)
	})
}

// renderPages renders each dashboard page into its layout once per
// language, keyed by its path in static: the page's text through the
// catalog ({{t "id"}}), and for its scripts the palette (one colour and
// label per series, internal/webassets) and their texts as JSON.
func renderPages(lang language.Tag) map[string][]byte {
	out := make(map[string][]byte, len(dashboardPages))
	data := struct {
		Page, Script, Lang string
		Palette, Text      template.JS
	}{Lang: "en", Palette: template.JS(webassets.PaletteJSON(lang)), Text: template.JS(scriptText(lang))}
	if i18n.Base(lang) == i18n.ZH {
		data.Lang = "zh-CN"
	}
	for name, script := range dashboardPages {
		file := name + ".html"
		t := template.Must(template.New(file).Funcs(template.FuncMap{"t": catalog.T(lang)}).ParseFS(static, "static/layout.tmpl", "static/"+file))
		var b bytes.Buffer
		data.Page, data.Script = name, script
		if err := t.ExecuteTemplate(&b, file, data); err != nil {
			panic(err) // the pages are embedded: a failure is a build mistake, caught by the tests
		}
		out["static/"+file] = b.Bytes()
	}
	return out
}

// serveStatic serves a rendered page, or else the embedded file name, as
// last modified at modTime.
func serveStatic(w http.ResponseWriter, r *http.Request, rendered map[string][]byte, name string, modTime time.Time) {
	b, ok := rendered[name]
	if !ok {
		var err error
		if b, err = fs.ReadFile(static, name); err != nil {
			http.NotFound(w, r)
			return
		}
	}
	switch {
	case strings.HasSuffix(name, ".html"):
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	case strings.HasSuffix(name, ".js"):
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	}
	http.ServeContent(w, r, "", modTime, bytes.NewReader(b))
}
