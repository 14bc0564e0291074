package cli

import (
	"regexp"
	"strings"
)

// The estimate package names the phase of the peak in English
// ("backward, step 2, block 3 of 32"); the human output renders it
// through the catalog, piece by piece. A phase the patterns do not know
// (a new one) is printed as the package wrote it.
var phasePieces = []struct {
	re *regexp.Regexp
	id string
}{
	{regexp.MustCompile(`^forward, step (\d+)$`), "estimate.phase.forward"},
	{regexp.MustCompile(`^forward, pass (\d+)$`), "estimate.phase.forwardPass"},
	{regexp.MustCompile(`^backward, step (\d+)$`), "estimate.phase.backward"},
	{regexp.MustCompile(`^end of forward \(head and loss\), step (\d+)$`), "estimate.phase.endForward"},
	{regexp.MustCompile(`^start of backward \(loss gradients\), step (\d+)$`), "estimate.phase.startBackward"},
	{regexp.MustCompile(`^optimizer step (\d+)$`), "estimate.phase.optimizer"},
	{regexp.MustCompile(`^zero_grad, step (\d+)$`), "estimate.phase.zeroGrad"},
	{regexp.MustCompile(`^logits, pass (\d+)$`), "estimate.phase.logits"},
	{regexp.MustCompile(`^generation, pass (\d+)$`), "estimate.phase.generation"},
	{regexp.MustCompile(`^model load$`), "estimate.phase.load"},
}

var (
	phaseBlock  = regexp.MustCompile(`^(.*), block (\d+) of (\d+)$`)
	phaseStates = " (states created)"
)

// phaseLabel renders an estimate phase in the reader's language.
func phaseLabel(t tr, phase string) string {
	states := strings.HasSuffix(phase, phaseStates)
	base := strings.TrimSuffix(phase, phaseStates)
	block, of := "", ""
	if m := phaseBlock.FindStringSubmatch(base); m != nil {
		base, block, of = m[1], m[2], m[3]
	}
	out := ""
	for _, p := range phasePieces {
		if m := p.re.FindStringSubmatch(base); m != nil {
			args := make([]any, 0, 1)
			for _, a := range m[1:] {
				args = append(args, a)
			}
			out = t(p.id, args...)
			break
		}
	}
	if out == "" {
		return phase
	}
	if block != "" {
		out = t("estimate.phase.block", out, block, of)
	}
	if states {
		out = t("estimate.phase.states", out)
	}
	return out
}
