// Package report renders one run from the history store: a self-contained
// HTML page (uPlot inlined from internal/webassets, data inlined as JSON,
// nothing fetched at view time) with a chart per memory family over time,
// the run's events marked on every chart, and the post-mortem; and the
// same data as JSON for scripts.
package report

import (
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/oomexplain"
	"github.com/torchmem/torchmem/internal/store"
)

// Data is everything a report shows about one run.
type Data struct {
	Run     store.Run      `json:"run"`
	Samples []store.Sample `json:"samples"`
	Events  []store.Event  `json:"events"`
	Steps   []store.Step   `json:"steps"`
}

// Reader is the part of the store a report reads.
type Reader interface {
	Run(ref string) (*store.Run, error)
	Samples(id string, from, to time.Time, maxPoints int) ([]store.Sample, error)
	Events(id string) ([]store.Event, error)
	Steps(id string, limit int) ([]store.Step, error)
}

// Load reads run ref (id, unique prefix or "last") with at most maxPoints
// samples (bucket maxima beyond that, so peaks survive; maxPoints < 0: no
// samples, for callers that show none) and the newest 20000 steps.
func Load(db Reader, ref string, maxPoints int) (*Data, error) {
	r, err := db.Run(ref)
	if err != nil {
		return nil, err
	}
	d := &Data{Run: *r}
	if maxPoints >= 0 {
		if d.Samples, err = db.Samples(r.ID, time.Time{}, time.Time{}, maxPoints); err != nil {
			return nil, err
		}
	}
	if d.Events, err = db.Events(r.ID); err != nil {
		return nil, err
	}
	if d.Steps, err = db.Steps(r.ID, 20000); err != nil {
		return nil, err
	}
	return d, nil
}

// Summary is the part of the stored post-mortem a report shows; the full
// JSON stays in Run.Summary.
type Summary struct {
	Cause           string   `json:"cause"`
	Verdict         string   `json:"verdict"`
	ExitCode        int      `json:"exit_code"`
	Recommendations []string `json:"recommendations"`
	KernelLines     []string `json:"kernel_lines"`
	Exception       string   `json:"exception"`
	Fragmentation   string   `json:"fragmentation"`
	OrphansKilled   int      `json:"orphans_killed"`
	Steps           int64    `json:"steps"`
	CgroupLimit     *int64   `json:"cgroup_limit"`
	// Notes say which evidence is the job's claim and which torchmem
	// measured (internal/oomexplain.RunVerdict).
	Notes []string `json:"notes"`
	// CopyOnRead is DataLoader workers that copied the dataset on read
	// (internal/oomexplain.CopyOnRead), with each worker's growth.
	CopyOnRead *oomexplain.CopyOnRead `json:"copy_on_read"`
	Incidents  []Incident             `json:"incidents"`
	// ZH is the same sentences in Chinese (supervisor.SummaryText),
	// stored with runs recorded since it existed.
	ZH *struct {
		Verdict         string     `json:"verdict"`
		Recommendations []string   `json:"recommendations"`
		Notes           []string   `json:"notes"`
		Incidents       []Incident `json:"incidents"`
	} `json:"zh"`
}

// Incident is one explained incident of the post-mortem.
type Incident struct {
	Kind        string `json:"kind"`
	Explanation struct {
		Verdict      string   `json:"verdict"`
		Alternatives []string `json:"alternatives"`
		Summary      string   `json:"summary"`
		Arithmetic   []string `json:"arithmetic"`
	} `json:"explanation"`
}

// In is s with its sentences in lang: the stored Chinese for zh when the
// run has it, else as recorded (English).
func (s Summary) In(lang language.Tag) Summary {
	if i18n.Base(lang) != i18n.ZH || s.ZH == nil {
		return s
	}
	z := s.ZH
	s.Verdict, s.Recommendations, s.Notes, s.Incidents = z.Verdict, z.Recommendations, z.Notes, z.Incidents
	return s
}

// ParseSummary decodes the stored post-mortem; a run without one (still
// running, supervisor lost) gives a zero Summary.
func ParseSummary(raw json.RawMessage) (Summary, error) {
	var s Summary
	if len(raw) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("decode run summary: %w", err)
	}
	return s, nil
}
