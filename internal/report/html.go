package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/units"
	"github.com/torchmem/torchmem/internal/webassets"
)

// page is what the template sees.
type page struct {
	Run      *Data
	Summary  Summary
	Command  string
	Duration string
	Status   string
	Lang     string
	Peaks    [][2]string
	UPlotJS  template.JS
	UPlotCSS template.CSS
	JSON     template.JS
	Palette  template.JS
	Version  string
}

type pageData struct {
	Charts []*chart    `json:"charts"`
	Events []eventMark `json:"events"`
	// Text is what the page's script writes (legend captions, the empty
	// chart notice), in the page's language.
	Text map[string]string `json:"text"`
}

type eventMark struct {
	T       float64 `json:"t"`
	Kind    string  `json:"kind"`
	Source  string  `json:"source"`
	Message string  `json:"message"`
}

// breakKinds are the events no series is carried across (the job or part
// of it was killed there: what was read before is no longer the value).
var breakKinds = map[string]bool{"oom_kill": true, "cgroup_oom": true}

// WriteHTML writes the self-contained report page, its text in lang (the
// post-mortem's verdicts come as recorded, already in the language of the
// run that wrote them).
func WriteHTML(w io.Writer, d *Data, lang language.Tag) error {
	sum, err := ParseSummary(d.Run.Summary)
	if err != nil {
		return err
	}
	sum = sum.In(lang)
	var breaks []float64
	pd := pageData{Text: scriptText(lang)}
	for _, e := range d.Events {
		t := float64(e.Time.UnixMilli()) / 1000
		if breakKinds[e.Kind] {
			breaks = append(breaks, t)
		}
		if e.Kind == "hello" || e.Kind == "ack" {
			continue // per-process chatter, listed in the table only
		}
		pd.Events = append(pd.Events, eventMark{T: t, Kind: e.Kind, Source: e.Source, Message: e.Message})
	}
	pd.Charts = charts(d, sum.CgroupLimit, lang, breaks)
	b, err := json.Marshal(pd) // escapes <, >, & so the data cannot end the script
	if err != nil {
		return fmt.Errorf("encode report data: %w", err)
	}
	p := page{Run: d, Summary: sum, Command: strings.Join(d.Run.Command, " "), Peaks: peakRows(lang, d.Run.Peaks),
		UPlotJS: template.JS(webassets.UPlotJS), UPlotCSS: template.CSS(webassets.UPlotCSS), JSON: template.JS(b),
		Palette: template.JS(webassets.PaletteJSON(lang)), Version: webassets.UPlotVersion, Lang: htmlLang(lang),
		Status: statusText(lang, string(d.Run.Status))}
	end := time.Now()
	if d.Run.End != nil {
		end = *d.Run.End
	}
	p.Duration = end.Sub(d.Run.Start).Truncate(100 * time.Millisecond).String()
	if err := pageTemplate(lang).Execute(w, p); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

// htmlLang is the page's lang attribute (zh-CN: the Simplified Chinese
// the catalog is written in, so browsers pick CJK fonts for it).
func htmlLang(lang language.Tag) string {
	if i18n.Base(lang) == i18n.ZH {
		return "zh-CN"
	}
	return "en"
}

// statusText is a run status in lang; an unknown one is shown as stored.
func statusText(lang language.Tag, s string) string {
	id := "status." + strings.ReplaceAll(s, " ", "_")
	if hasMessage(id) {
		return catalog.Sprintf(lang, id)
	}
	return s
}

// scriptText is the text the page's script needs, in lang.
func scriptText(lang language.Tag) map[string]string {
	t := catalog.T(lang)
	return map[string]string{"no_samples": t("charts.none"), "markers": t("charts.markers"), "time": t("charts.time")}
}

// peakRows are the run's peaks by series label (a key the palette does
// not know is shown as stored), sorted by key.
func peakRows(lang language.Tag, p map[string]int64) [][2]string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out [][2]string
	for _, k := range keys {
		out = append(out, [2]string{webassets.Label(lang, k), units.Bytes(p[k])})
	}
	return out
}

var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"time":  func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05.000") },
	"bytes": units.Bytes,
	"t":     func(id string, args ...any) string { return id },
}).Parse(pageHTML))

// pageTemplates is the template per language, with "t" bound to it.
var pageTemplates = map[language.Tag]*template.Template{}

func init() {
	for _, lang := range []language.Tag{i18n.EN, i18n.ZH} {
		pageTemplates[lang] = template.Must(pageTmpl.Clone()).Funcs(template.FuncMap{"t": catalog.T(lang)})
	}
}

func pageTemplate(lang language.Tag) *template.Template {
	if t, ok := pageTemplates[i18n.Base(lang)]; ok {
		return t
	}
	return pageTemplates[i18n.EN]
}
