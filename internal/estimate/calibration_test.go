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

// TestCalibration replays the H200 capture as it was measured: its rows one
// after another in one process (TestCalibrationOneProcess shows it was).
func TestCalibration(t *testing.T) {
	rows := loadCalibration(t)
	results, err := EstimateOneProcess(rows)
	if err != nil {
		t.Fatal(err)
	}
	var errs []float64
	for i, r := range rows {
		res := results[i]
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
		if er < calUnder || ep < calUnder {
			t.Errorf("%s: reserved %+.1f%%, nvidia-smi %+.1f%% (limit %.0f%% under)", r.ID, 100*er, 100*ep, -100*calUnder)
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

// TestCalibrationOneProcess is why TestCalibration replays the capture in
// one process: model_state_bytes is torch.cuda.memory_allocated() after
// each row's load, blocks as the allocator cut them. A fresh process puts
// GPT-2's 154,389,504-byte fp32 wte in its own 155,189,248-byte segment and
// counts the 799,744-byte tail it cannot split; the first row has that
// tail, the second (the same model and load) does not: its wte was cut
// from the segment the first row's autograd-thread cuBLAS workspace pinned.
// Replayed in one process, every GPT-2 row's load is exact.
func TestCalibrationOneProcess(t *testing.T) {
	rows := loadCalibration(t)
	warm, err := EstimateOneProcess(rows)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		fresh, err := r.Estimate()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-36s model_state_bytes %11d  one process %+9d  fresh process %+9d", r.ID, r.ModelStateBytes,
			warm[i].loaded-r.ModelStateBytes, fresh.loaded-r.ModelStateBytes)
		switch r.ID {
		case "gpt2-b8-s512-fp32-adamw", "gpt2-b8-s512-ampbf16-adamw", "gpt2medium-b4-s1024-fp32-adamw":
			if warm[i].loaded != r.ModelStateBytes {
				t.Errorf("%s: the one-process load leaves %d bytes allocated, measured %d", r.ID, warm[i].loaded, r.ModelStateBytes)
			}
		}
		if r.ID == "gpt2-b8-s512-ampbf16-adamw" && fresh.loaded-r.ModelStateBytes != 799744 {
			t.Errorf("%s: a fresh process's load is %+d bytes off measured, want the wte tail's +799744", r.ID, fresh.loaded-r.ModelStateBytes)
		}
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
