package procfs

import (
	"strings"
	"testing"
)

// TestReliabilityParseBracketedNested: "[0[]" made parseBracketed return
// "0[" (FuzzParseBracketed's property, which had to exempt "[[" to pass).
func TestReliabilityParseBracketedNested(t *testing.T) {
	var got []string
	for _, in := range []string{"[0[]", "[[madvise]", "always [[x]] never"} {
		v, err := parseBracketed(in)
		if err == nil {
			t.Errorf("parseBracketed(%q) = %q, want an error", in, v)
			got = append(got, in+"="+v)
		} else {
			got = append(got, in+"=error")
		}
	}
	t.Logf("RELIABILITY|%s|%s|%s", "THP choice file with a nested bracket", "refused ([0[], [[madvise], always [[x]] never)", strings.Join(got, ", "))
}
