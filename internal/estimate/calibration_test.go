package estimate

import (
	"encoding/json"
	"math"
	"os"
	"sort"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// loadCalibration reads testdata/calibration.jsonl (H200, torch 2.11,
// transformers 5.17, SDPA).
func loadCalibration(t testing.TB) []Measured {
	rows, err := ReadCalibration("testdata/calibration.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// estimateRow runs the estimator on a calibration row's own model config.
func estimateRow(t testing.TB, r Measured) *Result {
	res, err := r.Estimate()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func relErr(got, want int64) float64 { return float64(got-want) / float64(want) }

// Accuracy the calibration rows hold the estimator to (issue 14): peak
// allocated within 5 % on every row, 1.5 % in the median; reserved and
// nvidia-smi never more than 5 % under what was measured (an
// underestimate is the unsafe direction for a fit check), within 10 %
// over.
const (
	calAllocatedRow    = 0.05
	calAllocatedMedian = 0.015
	calUnder           = -0.05
	calOver            = 0.10
)

// calUnderKnown are rows whose reserved figure is still more than 5 %
// under, with why: the check holds the rest, and a fix that brings one
// within is noticed (the test fails when a listed row no longer misses).
var calUnderKnown = map[string]string{
	// bf16 GPT-2 inference: reserved -7.6 %, nvidia-smi -5.1 %: the run
	// holds 127,926,272 bytes (61 x 2 MiB) more in segments. Its peak
	// allocated is exactly model_state_bytes + ln_f's output + the ids +
	// the logits' 786 MiB segment, so that run counted no 32 MiB cuBLAS
	// workspace and no bf16 weight got a block with slack (the walk puts
	// ~10 MB of slack on weights cast into fp32 segment tails, and wte's
	// bf16 copy in a new segment): the load's placement differs from the
	// one modelled (m.cuda() param by param, then .to(bf16) param by
	// param). Tried, none a cause shown in code: lm_head's own fp32 weight
	// made on the GPU and freed when tied (-6.0 %), no workspace (-10.6 %),
	// fp32 weights all kept until the cast ends (+2.4 %, allocated +4.4 %;
	// nothing in Module._apply keeps them). The GPT-2 forward's own
	// live ranges (NewGELU's 0.5*x first, locals held to the return) are
	// modelled and fit in the cached segments. Needs an allocator trace.
	"gpt2-b8-s1024-bf16-infer": "reserved -7.6%, nvidia-smi -5.1%: the load's segment layout differs from the modelled one",
}

func TestCalibration(t *testing.T) {
	var errs []float64
	for _, r := range loadCalibration(t) {
		res := estimateRow(t, r)
		if res.Params != r.Params {
			t.Errorf("%s: %d params, measured model has %d", r.ID, res.Params, r.Params)
		}
		ea := relErr(res.PeakAllocatedBytes, r.PeakAllocated)
		ep := relErr(res.ProcessBytes, r.NVMLProcessUsed)
		er := relErr(res.PeakReservedBytes, r.PeakReserved)
		t.Logf("%-36s allocated %6.2f GB (%+5.1f%%)  reserved %6.2f GB (%+5.1f%%)  process %6.2f GB (%+5.1f%%)  peak at %s",
			r.ID, gb(res.PeakAllocatedBytes), 100*ea, gb(res.PeakReservedBytes), 100*er, gb(res.ProcessBytes), 100*ep, res.PeakPhase)
		if math.Abs(ea) > calAllocatedRow {
			t.Errorf("%s: peak allocated off by %+.1f%% (limit %.0f%%)", r.ID, 100*ea, 100*calAllocatedRow)
		}
		under := er < calUnder || ep < calUnder
		if _, known := calUnderKnown[r.ID]; known != under {
			t.Errorf("%s: reserved %+.1f%%, nvidia-smi %+.1f%% (limit %.0f%% under; known to miss: %v)", r.ID, 100*er, 100*ep, -100*calUnder, known)
		}
		if er > calOver || ep > calOver {
			t.Errorf("%s: reserved %+.1f%%, nvidia-smi %+.1f%% (limit %.0f%% over)", r.ID, 100*er, 100*ep, 100*calOver)
		}
		errs = append(errs, math.Abs(ea))
	}
	sort.Float64s(errs)
	med := (errs[len(errs)/2] + errs[(len(errs)-1)/2]) / 2
	t.Logf("median |error| of peak allocated: %.2f%%", 100*med)
	if med > calAllocatedMedian {
		t.Errorf("median |error| %.2f%% > %.1f%%", 100*med, 100*calAllocatedMedian)
	}
}

func gb(n int64) float64 { return float64(n) / 1e9 }

// TestSnapshotTrace checks the walk against a second, independent capture:
// memory_stats() of a GPT-2 autocast-bf16 training run recorded with a full
// allocator trace. That run also kept a DynamicCache alive during backward,
// which the calibration harness did not; it is added for the comparison.
func TestSnapshotTrace(t *testing.T) {
	data, err := os.ReadFile("testdata/gpt2_ampbf16_trace_stats.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Tokens   int   `json:"tokens"`
		Steps    int   `json:"steps"`
		Peak     int64 `json:"allocated_bytes.all.peak"`
		Reserved int64 `json:"reserved_bytes.all.peak"`
		Cache    int64 `json:"dynamic_cache_bytes"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	md, err := models.Preset("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Estimate(md, Options{Batch: 1, Seq: s.Tokens, Precision: "amp-bf16", Steps: s.Steps})
	if err != nil {
		t.Fatal(err)
	}
	got := r.PeakAllocatedBytes + s.Cache
	e := relErr(got, s.Peak)
	t.Logf("trace: peak allocated %d, estimate %d + harness extras = %d (%+.1f%%); reserved %d vs %d (%+.1f%%)",
		s.Peak, r.PeakAllocatedBytes, got, 100*e, s.Reserved, r.PeakReservedBytes, 100*relErr(r.PeakReservedBytes, s.Reserved))
	if math.Abs(e) > 0.05 {
		t.Errorf("peak allocated off by %+.1f%%", 100*e)
	}
}
