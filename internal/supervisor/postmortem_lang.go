package supervisor

import (
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/oomexplain"
	"golang.org/x/text/language"
)

// SummaryText is the post-mortem's sentences in another language than
// English, kept with the run (Summary.ZH) so that `show` and the HTML
// report in that language, run by anyone later, read the same verdict the
// terminal printed. It is always stored, whatever the run's language, so
// the stored JSON does not depend on the locale of the run.
type SummaryText struct {
	Verdict         string      `json:"verdict"`
	Recommendations []string    `json:"recommendations,omitempty"`
	Notes           []string    `json:"notes,omitempty"`
	Incidents       []Explained `json:"incidents,omitempty"`
}

// localize explains the same evidence again in Chinese for the stored
// summary (ZH) and keeps the run's language for Print; English needs
// nothing more, the summary already is.
func (s *Summary) localize(e evidence, lang language.Tag) {
	s.ZH = explainIn(e, i18n.ZH)
	s.lang = i18n.Base(lang)
}

// explainIn is the post-mortem's sentences in lang.
func explainIn(e evidence, lang language.Tag) *SummaryText {
	ev := e.runEvidence()
	ev.Lang = lang
	rv := oomexplain.ExplainRun(ev)
	t := &SummaryText{Verdict: rv.Verdict, Notes: rv.Notes, Recommendations: rv.Recommendations}
	for _, inc := range rv.Incidents {
		t.Incidents = append(t.Incidents, Explained{Kind: inc.Kind, PIDs: inc.PIDs, Explanation: *inc.Explanation})
	}
	return t
}

// forPeople is s with its sentences in lang: the stored Chinese for zh
// (at the end of the run, or read back from the history store), else s
// itself (English).
func (s *Summary) forPeople(lang language.Tag) *Summary {
	if i18n.Base(lang) != i18n.ZH || s.ZH == nil {
		return s
	}
	c := *s
	c.Verdict, c.Notes, c.Recommendations, c.Incidents = s.ZH.Verdict, s.ZH.Notes, s.ZH.Recommendations, s.ZH.Incidents
	return &c
}
