package lint

import (
	"path/filepath"
	"strings"
)

// SARIF 2.1.0, the subset code-scanning services read: one run, the rule
// catalogue, one result per finding.

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool       sarifTool     `json:"tool"`
	ColumnKind string        `json:"columnKind"`
	Results    []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string      `json:"id"`
	Name                 string      `json:"name"`
	ShortDescription     sarifText   `json:"shortDescription"`
	FullDescription      sarifText   `json:"fullDescription"`
	Help                 sarifText   `json:"help"`
	HelpURI              string      `json:"helpUri"`
	DefaultConfiguration sarifConfig `json:"defaultConfiguration"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
}

const docURL = "https://github.com/torchmem/torchmem/blob/main/docs/lint.md"

// SARIF returns findings as a SARIF 2.1.0 log for code-scanning upload;
// version is torchmem's own.
func SARIF(findings []Finding, version string) any {
	rules := make([]sarifRule, len(allRules))
	index := map[string]int{}
	for i, r := range allRules {
		index[r.ID] = i
		rules[i] = sarifRule{
			ID: r.ID, Name: r.Name,
			ShortDescription:     sarifText{r.Name},
			FullDescription:      sarifText{r.Summary},
			Help:                 sarifText{"Fix: " + r.Fix},
			HelpURI:              docURL + "#" + sarifAnchor(r.ID, r.Name),
			DefaultConfiguration: sarifConfig{sarifLevel(r.Severity)},
		}
	}
	results := make([]sarifResult, 0, len(findings))
	for _, f := range findings {
		results = append(results, sarifResult{
			RuleID: f.Rule, RuleIndex: index[f.Rule], Level: sarifLevel(f.Severity),
			Message: sarifText{f.Message + ". Fix: " + f.Fix},
			Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
				ArtifactLocation: sarifArtifact{URI: sarifURI(f.File)},
				Region:           sarifRegion{StartLine: f.Line, StartColumn: f.Col},
			}}},
		})
	}
	return sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool:       sarifTool{sarifDriver{Name: "torchmem", Version: version, InformationURI: "https://github.com/torchmem/torchmem", Rules: rules}},
			ColumnKind: "unicodeCodePoints",
			Results:    results,
		}},
	}
}

func sarifLevel(sev string) string {
	switch sev {
	case SevError:
		return "error"
	case SevInfo:
		return "note"
	}
	return "warning"
}

// sarifURI: relative paths stay relative (resolved against the checkout by
// code scanning), absolute ones become file:// URIs.
func sarifURI(path string) string {
	p := filepath.ToSlash(path)
	p = strings.TrimPrefix(p, "./")
	if filepath.IsAbs(path) {
		return "file://" + p
	}
	return p
}

// sarifAnchor is the fragment GitHub gives the rule's heading in
// docs/lint.md ("### TM004 gradients-not-released" becomes
// "tm004-gradients-not-released"); the bare id matches no heading.
func sarifAnchor(id, name string) string {
	return strings.ToLower(id + "-" + strings.ReplaceAll(name, " ", "-"))
}
