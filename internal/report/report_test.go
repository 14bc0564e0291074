package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/store"
)

func testData() *Data {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	end := t0.Add(3 * time.Second)
	sum := `{"cause":"cgroup-oom-kill","verdict":"killed by the kernel OOM killer </script><b>x</b>","exit_code":137,"cgroup_limit":209715200,"recommendations":["raise --memory-max"],"kernel_lines":["Memory cgroup out of memory: Killed process 42 (python3)"],"incidents":[{"kind":"kernel_oom_kill","explanation":{"verdict":"cgroup_limit","summary":"the memory cgroup hit its limit","arithmetic":["usage 200 MiB of limit 200 MiB"]}}]}`
	d := &Data{Run: store.Run{ID: "abc123", Command: []string{"python3", "train.py"}, Start: t0, End: &end,
		Status: store.StatusOOMKilled, Peaks: map[string]int64{"cgroup_usage": 209715200}, Summary: json.RawMessage(sum)}}
	for i := 0; i < 30; i++ {
		u := int64(i) * 7 << 20
		d.Samples = append(d.Samples, store.Sample{Time: t0.Add(time.Duration(i) * 100 * time.Millisecond), CgroupUsage: &u,
			HostAvailable: store.Int(20 << 30), GPUUsed: []*int64{store.Int(u * 3)}})
	}
	sec := 0.02
	rank := 0
	d.Steps = []store.Step{{Time: t0.Add(time.Second), Step: 1, PID: 42, StepSeconds: &sec},
		{Time: t0.Add(2 * time.Second), Step: 2, PID: 42, Rank: &rank, StepPeakAllocated: store.Int(3 << 30), StepPeakReserved: store.Int(4 << 30)}}
	d.Events = []store.Event{{Time: t0.Add(2900 * time.Millisecond), Kind: "cgroup_oom", Source: "cgroup", Message: "cgroup hit its memory limit"}}
	return d
}

func TestWriteHTMLSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, testData(), i18n.EN); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`).MatchString(html) {
		t.Fatal("report references the network")
	}
	for _, want := range []string{"uPlot", "raise --memory-max", "Killed process 42", "abc123", "oom-killed", "&lt;/script&gt;&lt;b&gt;", "cgroup_limit", "usage 200 MiB of limit 200 MiB"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The inline data must parse and hold every chart with its series.
	m := regexp.MustCompile(`(?s)<script id="data" type="application/json">(.*?)</script>`).FindStringSubmatch(html)
	if m == nil {
		t.Fatal("no data script")
	}
	var pd pageData
	if err := json.Unmarshal([]byte(m[1]), &pd); err != nil {
		t.Fatalf("data: %v", err)
	}
	var titles []string
	for _, c := range pd.Charts {
		titles = append(titles, c.Title)
		for _, col := range c.Cols {
			if len(col) != len(c.X) {
				t.Fatalf("%s: column length %d != %d", c.Title, len(col), len(c.X))
			}
		}
	}
	if got := strings.Join(titles, "|"); got != "Job host memory|Host memory available (meminfo)|GPU memory|Per-step peaks (hook, measured)|Step time (hook)" {
		t.Fatalf("charts %s", got)
	}
	if c := pd.Charts[3]; strings.Join(c.Series, ",") != "rank 0 · per-step peak allocated,rank 0 · per-step peak reserved" || len(c.X) != 1 || *c.Cols[0][0] != 3<<30 {
		t.Fatalf("step peaks chart %+v", c)
	}
	if got := strings.Join(titles, "|"); got == "" {
		t.Fatalf("charts %s", got)
	}
	if pd.Charts[0].Limit == nil || *pd.Charts[0].Limit != 209715200 || len(pd.Events) != 1 {
		t.Fatalf("limit %v events %v", pd.Charts[0].Limit, pd.Events)
	}
}

func TestParseSummaryBad(t *testing.T) {
	if _, err := ParseSummary(json.RawMessage(`{"cause":`)); err == nil {
		t.Fatal("want error")
	}
	if s, err := ParseSummary(nil); err != nil || s.Cause != "" {
		t.Fatal(s, err)
	}
}

// TestCopyOnReadTable: a run whose workers copied the dataset on read shows
// each worker's growth.
func TestCopyOnReadTable(t *testing.T) {
	d := testData()
	d.Run.Summary = json.RawMessage(`{"cause":"ok","verdict":"exited normally","copy_on_read":{"workers":2,"measured":2,"median_growth_bytes":88604672,` +
		`"per_worker":[{"pid":7,"parent_pid":1,"first_private_dirty":7340032,"last_private_dirty":95944704,"parent_first_rss_anon":495976448,"parent_last_rss_anon":496082944,"seconds":11,"grew":true},` +
		`{"pid":8,"parent_pid":1,"first_private_dirty":7340032,"last_private_dirty":9437184,"parent_first_rss_anon":495976448,"parent_last_rss_anon":496082944,"seconds":2,"grew":false}]}}`)
	var b bytes.Buffer
	if err := WriteHTML(&b, d, i18n.EN); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`id="copy-on-read"`, "2 of 2 workers measured", "<td>7</td><td>1</td><td>7.00 MiB</td><td>91.50 MiB</td><td>84.50 MiB</td><td>104.00 KiB</td><td>11 s</td><td>yes</td>", "<td>no</td>"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	var plain bytes.Buffer
	if err := WriteHTML(&plain, testData(), i18n.EN); err != nil || strings.Contains(plain.String(), "copy-on-read") {
		t.Fatalf("a run without copy-on-read shows the table (err %v)", err)
	}
}

// pageDataOf renders d in lang and decodes the page's inline data.
func pageDataOf(t *testing.T, d *Data, lang language.Tag) (string, pageData) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, d, lang); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script id="data" type="application/json">(.*?)</script>`).FindStringSubmatch(b.String())
	var pd pageData
	if m == nil || json.Unmarshal([]byte(m[1]), &pd) != nil {
		t.Fatal("no page data")
	}
	return b.String(), pd
}

// TestChartsData: series keys, labels, colours and stepping come from
// webassets' table; the OOM is a null row; PSS is carried between reads
// and not past the OOM; the PSS note follows the peaks; zh labels.
func TestChartsData(t *testing.T) {
	d := gapData()
	html, pd := pageDataOf(t, d, i18n.ZH)
	host := pd.Charts[0]
	if host.Title != "任务主机内存" || strings.Join(host.Keys, ",") != "cgroup_usage,pss_total" ||
		strings.Join(host.Series, ",") != "cgroup 用量 (memory.current),PSS（按比例分摊，smaps_rollup）" ||
		strings.Join(host.Colors, ",") != "#1f77b4,#d62728" || host.Step[0] || !host.Step[1] {
		t.Fatalf("host chart %+v", host)
	}
	if !strings.HasPrefix(host.Note, "PSS 高于 cgroup 用量") {
		t.Errorf("note %q", host.Note)
	}
	oom := -1
	for i, x := range host.X {
		if x == float64(d.Events[0].Time.UnixMilli())/1000 && oom < 0 {
			oom = i
		}
	}
	if oom < 0 || host.Cols[0][oom] != nil || host.Cols[1][oom] != nil || host.Cols[1][oom+1] != nil || host.Cols[1][1] == nil {
		t.Fatalf("OOM row %d in %v", oom, host.X)
	}
	for _, want := range []string{`lang="zh-CN"`, "<h2>事后分析 (post-mortem)</h2>", "<th>时间</th>", "被 OOM 终止 (oom-killed)", "<td>cgroup 用量 (memory.current)</td>"} {
		if !strings.Contains(html, want) {
			t.Errorf("zh report lacks %q", want)
		}
	}
	delete(d.Run.Peaks, "pss_total")
	if _, pd := pageDataOf(t, d, i18n.EN); pd.Charts[0].Note != "" {
		t.Errorf("note without PSS above cgroup: %q", pd.Charts[0].Note)
	}
}

func TestReportCatalogComplete(t *testing.T) {
	if m := catalog.Missing(); len(m) > 0 {
		t.Fatal(strings.Join(m, "\n"))
	}
	// Every {{t "id"}} of the template is in the catalog.
	for _, m := range regexp.MustCompile(`\{\{t "([a-z_.-]+)"`).FindAllStringSubmatch(pageHTML, -1) {
		if !hasMessage(m[1]) {
			t.Errorf("template uses %s, not in the catalog", m[1])
		}
	}
}

// TestReportZHVerdict: a Chinese report shows the Chinese post-mortem the
// run stored (summary.zh), an English one the English; a run recorded
// before zh was stored keeps its English in both.
func TestReportZHVerdict(t *testing.T) {
	d := testData()
	d.Run.Summary = json.RawMessage(`{"cause":"policy-stop","verdict":"stopped by torchmem","exit_code":143,` +
		`"recommendations":["fix the leak"],"zh":{"verdict":"torchmem 在内存耗尽之前停止了作业","recommendations":["修复内存泄漏"]}}`)
	var zh, en bytes.Buffer
	if err := WriteHTML(&zh, d, i18n.ZH); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&en, d, i18n.EN); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(zh.String(), "torchmem 在内存耗尽之前停止了作业") || !strings.Contains(zh.String(), "修复内存泄漏") || strings.Contains(zh.String(), "fix the leak") {
		t.Errorf("zh report does not show the stored Chinese post-mortem")
	}
	if !strings.Contains(en.String(), "stopped by torchmem") || strings.Contains(en.String(), "修复内存泄漏") {
		t.Errorf("en report does not show the English post-mortem")
	}
	var old bytes.Buffer
	if err := WriteHTML(&old, testData(), i18n.ZH); err != nil || !strings.Contains(old.String(), "raise --memory-max") {
		t.Errorf("a summary without zh text: %v", err)
	}
}
