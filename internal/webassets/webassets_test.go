package webassets

import (
	"strings"
	"testing"
)

func TestEmbedded(t *testing.T) {
	if len(UPlotJS) < 20000 || !strings.Contains(UPlotJS, "uPlot") {
		t.Fatalf("uPlot JS missing or truncated: %d bytes", len(UPlotJS))
	}
	if !strings.Contains(UPlotCSS, ".uplot") {
		t.Fatal("uPlot CSS missing")
	}
}
