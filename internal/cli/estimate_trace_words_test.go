package cli

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/i18n"
)

// TestShapeRulesSaysOnlyThoseUsed: a detector's masks (yolov5's NMS and
// loss) are not said to be sized as a mixture of experts' router; a
// router's are, with the other rules only where they applied. The notes'
// words are the tracer's (_trace_masks.py).
func TestShapeRulesSaysOnlyThoseUsed(t *testing.T) {
	tt := traceCatalog.T(i18n.EN)
	detector := []estimate.TraceNote{
		{Kind: "datashape", Op: "boolean mask index", Message: "all 38400 mask elements taken as true: the most it can be"},
		{Kind: "datashape", Op: "nms", Message: "all 300 boxes taken as kept: the most it can be", Rule: estimate.ShapeMost},
	}
	if got := shapeRules(tt, detector); strings.Contains(got, "router") || !strings.Contains(got, "the most each can be") {
		t.Errorf("detector: %q", got)
	}
	moe := []estimate.TraceNote{
		{Kind: "datashape", Op: "nonzero", Message: "512 of 4096 mask elements taken as true: a balanced router's share", Rule: estimate.ShapeRouter},
		{Kind: "datashape", Op: "unique", Message: "each of the 8 values its 1024 elements were selected from taken as present", Rule: estimate.ShapeKnown},
	}
	if got := shapeRules(tt, moe); got != tt("trace.datashape.router")+"; "+tt("trace.datashape.known") {
		t.Errorf("router: %q", got)
	}
	// a segmentation evaluation's confusion matrix
	confusion := []estimate.TraceNote{
		{Kind: "datashape", Op: "boolean mask index", Message: "all 4096 mask elements taken as true: the most it can be"},
		{Kind: "datashape", Op: "bincount", Message: "values taken as below its minlength 441: an output of that many counts", Rule: estimate.ShapeMinLength},
	}
	if got := shapeRules(tt, confusion); got != tt("trace.datashape.minlength")+"; "+tt("trace.datashape.most") {
		t.Errorf("confusion matrix: %q", got)
	}
}

// TestParamCount: a small model's parameters are not "0.0M".
func TestParamCount(t *testing.T) {
	for n, want := range map[int64]string{4160: "4,160", 99_999: "99,999", 100_000: "0.1M", 124_439_808: "124.4M"} {
		if got := paramCount(n); got != want {
			t.Errorf("paramCount(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestOneNoteIsSingular: one value read from a tensor without data is
// said as one ("1 value was read"), more as many.
func TestOneNoteIsSingular(t *testing.T) {
	tt := traceCatalog.T(i18n.EN)
	note := estimate.TraceNote{Kind: "placeholder", Op: "item", Where: []string{"train.py:9:main"}}
	var one, two strings.Builder
	printNotes(&one, tt, "trace.placeholder", []estimate.TraceNote{note}, 1)
	printNotes(&two, tt, "trace.placeholder", []estimate.TraceNote{note, note}, 2)
	if !strings.Contains(one.String(), "1 value was read") || !strings.Contains(two.String(), "2 values were read") {
		t.Errorf("one: %q\ntwo: %q", one.String(), two.String())
	}
}

// TestNoteCountPastTheSites: the notes of a kind are counted as the trace
// counted them, not as the sites it said (each once, at most 20 a kind).
func TestNoteCountPastTheSites(t *testing.T) {
	shape := estimate.TraceNote{Kind: "datashape", Op: "nonzero"}
	read := estimate.TraceNote{Kind: "placeholder", Op: "item"}
	r := &estimate.TraceResult{NoteCounts: map[string]int{"datashape": 57}}
	if n := noteCount(r, []estimate.TraceNote{shape, shape}); n != 57 {
		t.Errorf("datashape: %d, want the trace's 57", n)
	}
	if n := noteCount(r, []estimate.TraceNote{read, read, read}); n != 3 {
		t.Errorf("placeholder: %d, want its 3 sites", n)
	}
}

// TestMaskCountNote: a count of a mask without data is said as a count
// taken as all its elements, not as a size assumed nor a value read as 0.
func TestMaskCountNote(t *testing.T) {
	tt := traceCatalog.T(i18n.EN)
	r := &estimate.TraceResult{
		Warnings:   []estimate.TraceNote{{Kind: "maskcount", Op: "sum", Where: []string{"utils.py:133:train_one_epoch"}}},
		NoteCounts: map[string]int{"maskcount": 4},
	}
	var b strings.Builder
	printTraceNotes(&b, tt, r)
	got := b.String()
	if !strings.Contains(got, "4 counts of masks without data") || strings.Contains(got, "sizes that depend") ||
		strings.Contains(got, "0 was used") {
		t.Errorf("notes:\n%s", got)
	}
}
