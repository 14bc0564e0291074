package supervisor

import (
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

// localize explains the same evidence again in lang for Print (nothing to
// do in English: the summary already is).
func (s *Summary) localize(e evidence, lang language.Tag) {
	if lang == language.Und || lang == language.English {
		return
	}
	ev := e.runEvidence()
	ev.Lang = lang
	rv := oomexplain.ExplainRun(ev)
	t := &summaryText{lang: lang, verdict: rv.Verdict, notes: rv.Notes, recommendations: rv.Recommendations}
	for _, inc := range rv.Incidents {
		t.incidents = append(t.incidents, Explained{Kind: inc.Kind, PIDs: inc.PIDs, Explanation: *inc.Explanation})
	}
	s.text = t
}

// forPeople is s with the text localize set, or s itself.
func (s *Summary) forPeople() *Summary {
	if s.text == nil {
		return s
	}
	c := *s
	c.Verdict, c.Notes, c.Recommendations, c.Incidents = s.text.verdict, s.text.notes, s.text.recommendations, s.text.incidents
	return &c
}
