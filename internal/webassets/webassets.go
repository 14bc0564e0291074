// Package webassets embeds the third-party browser code that torchmem's
// self-contained HTML pages inline, so pages work with no network at view
// time. uPlot 1.6.32 (MIT, see uplot/LICENSE) is vendored unmodified from
// the npm package "uplot" (dist/uPlot.iife.min.js and dist/uPlot.min.css).
package webassets

import _ "embed"

// UPlotJS is uPlot's minified IIFE build; it defines the global uPlot.
//
//go:embed uplot/uPlot.iife.min.js
var UPlotJS string

// UPlotCSS is uPlot's stylesheet.
//
//go:embed uplot/uPlot.min.css
var UPlotCSS string

// UPlotVersion is the vendored uPlot release.
const UPlotVersion = "1.6.32"
