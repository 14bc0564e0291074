package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/units"
	"github.com/torchmem/torchmem/internal/webassets"
)

// page is what the template sees.
type page struct {
	Run      *Data
	Summary  Summary
	Command  string
	Duration string
	Peaks    [][2]string
	UPlotJS  template.JS
	UPlotCSS template.CSS
	JSON     template.JS
	Version  string
}

type pageData struct {
	Charts []*chart    `json:"charts"`
	Events []eventMark `json:"events"`
}

type eventMark struct {
	T       float64 `json:"t"`
	Kind    string  `json:"kind"`
	Source  string  `json:"source"`
	Message string  `json:"message"`
}

// WriteHTML writes the self-contained report page.
func WriteHTML(w io.Writer, d *Data) error {
	sum, err := ParseSummary(d.Run.Summary)
	if err != nil {
		return err
	}
	pd := pageData{Charts: charts(d, sum.CgroupLimit)}
	for _, e := range d.Events {
		if e.Kind == "hello" || e.Kind == "ack" {
			continue // per-process chatter, listed in the table only
		}
		pd.Events = append(pd.Events, eventMark{T: float64(e.Time.UnixMilli()) / 1000, Kind: e.Kind, Source: e.Source, Message: e.Message})
	}
	b, err := json.Marshal(pd) // escapes <, >, & so the data cannot end the script
	if err != nil {
		return fmt.Errorf("encode report data: %w", err)
	}
	p := page{Run: d, Summary: sum, Command: strings.Join(d.Run.Command, " "), Peaks: peakRows(d.Run.Peaks),
		UPlotJS: template.JS(webassets.UPlotJS), UPlotCSS: template.CSS(webassets.UPlotCSS), JSON: template.JS(b),
		Version: webassets.UPlotVersion}
	end := time.Now()
	if d.Run.End != nil {
		end = *d.Run.End
	}
	p.Duration = end.Sub(d.Run.Start).Truncate(100 * time.Millisecond).String()
	if err := pageTmpl.Execute(w, p); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

func peakRows(p map[string]int64) [][2]string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out [][2]string
	for _, k := range keys {
		out = append(out, [2]string{k, units.Bytes(p[k])})
	}
	return out
}

var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"time":  func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05.000") },
	"bytes": units.Bytes,
}).Parse(pageHTML))
