package buildcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// One place per model family (issue 14, item 7): what differs by family
// is asked of the family (internal/estimate/family.go's interface, and
// internal/estimate/models/family.go's registry), never decided by a
// switch, comparison or table on the family somewhere else, so that a new
// family is its own files plus tests. The family's own files may name it.

// familyOwnFiles may name families: each family's estimator file, the
// models files that describe and register them, and the declarations.
var familyOwnFiles = map[string]bool{
	"estimate/gpt2.go": true, "estimate/llama.go": true, "estimate/bert.go": true, "estimate/t5.go": true,
	"estimate/vit.go": true, "estimate/resnet.go": true, "estimate/moe.go": true, "estimate/granite.go": true,
	"estimate/models/params.go": true, "estimate/models/vision.go": true, "estimate/models/moe.go": true,
	"estimate/models/granite.go": true,
	"estimate/models/model.go":   true,
}

// familyDecision matches a decision on a family: a case on a family
// constant, a comparison of a Family field or a family name, a map entry
// keyed by a family.
var familyDecision = regexp.MustCompile(
	`case\s+(models\.)?(GPT2|Llama|BERT|T5|ViT|ResNet|MoE|Granite)\b` +
		`|\bFamily\s*[!=]=` +
		`|[!=]=\s*(models\.)?(GPT2|Llama|BERT|T5|ViT|ResNet|MoE|Granite)\b` +
		`|[!=]=\s*"(gpt2|llama|bert|t5|vit|resnet|moe|granite)"` +
		`|^\s*models\.(GPT2|Llama|BERT|T5|ViT|ResNet|MoE|Granite)\s*:`)

func TestNoFamilySwitchOutsideItsFile(t *testing.T) {
	for _, planted := range []string{`case models.ResNet:`, `if md.Family == models.ViT {`, `if family != "resnet" {`,
		`	models.Llama: {"q_proj"},`} {
		if !familyDecision.MatchString(planted) {
			t.Fatalf("the check misses %q", planted)
		}
	}
	for _, dir := range []string{"estimate", "estimate/models", "cli"} {
		files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rel := dir + "/" + filepath.Base(f)
			if strings.HasSuffix(f, "_test.go") || familyOwnFiles[rel] {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(data), "\n") {
				code, _, _ := strings.Cut(line, "//")
				if familyDecision.MatchString(code) {
					t.Errorf("internal/%s:%d decides on a model family outside its file: %s\n"+
						"(ask the family: a method of estimate's family interface or a field of models' spec)",
						rel, i+1, strings.TrimSpace(line))
				}
			}
		}
	}
}
