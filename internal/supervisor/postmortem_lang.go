package supervisor

import (
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/oomexplain"
	"golang.org/x/text/language"
)

// summaryText is the post-mortem's text for people in Config.Lang. It is
// not part of Summary's JSON: the summary kept with the run stays
// English, so history, `torchmem show --json` and scripts never see the
// language change.
type summaryText struct {
	lang                   language.Tag
	verdict                string
	notes, recommendations []string
	incidents              []Explained
}

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
// summary (ZH), and in lang for Print (nothing to do in English: the
// summary already is).
func (s *Summary) localize(e evidence, lang language.Tag) {
	s.ZH = explainIn(e, i18n.ZH)
	if lang == language.Und || i18n.Base(lang) == i18n.EN {
		return
	}
	t := s.ZH
	if i18n.Base(lang) != i18n.ZH {
		t = explainIn(e, lang)
	}
	s.text = &summaryText{lang: lang, verdict: t.Verdict, notes: t.Notes, recommendations: t.Recommendations, incidents: t.Incidents}
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

// forPeople is s with its sentences in lang: the text localize set at the
// end of the run, else the stored Chinese (a summary read back from the
// history store), else s itself (English).
func (s *Summary) forPeople(lang language.Tag) *Summary {
	t := s.text
	if t == nil && i18n.Base(lang) == i18n.ZH && s.ZH != nil {
		t = &summaryText{lang: i18n.ZH, verdict: s.ZH.Verdict, notes: s.ZH.Notes, recommendations: s.ZH.Recommendations, incidents: s.ZH.Incidents}
	}
	if t == nil {
		return s
	}
	c := *s
	c.Verdict, c.Notes, c.Recommendations, c.Incidents = t.verdict, t.notes, t.recommendations, t.incidents
	return &c
}
