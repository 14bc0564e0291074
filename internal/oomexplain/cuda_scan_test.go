package oomexplain

import (
	"reflect"
	"regexp"
	"testing"
)

// FuzzCUDAScan: clauseRe.find finds what its regexp finds, and
// collapseSpace does what `\s+` -> " " does.
func FuzzCUDAScan(f *testing.F) {
	addSeeds(f, "cuda")
	f.Add([]byte("1.2.3 MiB free; 4 GiB free) 5  GiB free; 12 KB allowed;his process has 1 B memory in use"))
	f.Add([]byte(" a\t\tb \n\f\r  c "))
	ws := regexp.MustCompile(`\s+`)
	res := []clauseRe{reTotalOld, reAllocOld, reFreeOld, reAllowed, reReservedOld, reCachedOld, reUnallocNew, reThisProcess}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := string(b)
		if got, want := collapseSpace(s), ws.ReplaceAllString(s, " "); got != want {
			t.Fatalf("collapseSpace(%q) = %q, want %q", s, got, want)
		}
		for _, r := range res {
			if got, want := r.find(s), r.re.FindStringSubmatch(s); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s on %q: %q, want %q", r.re, s, got, want)
			}
		}
	})
}
