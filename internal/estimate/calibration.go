package estimate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// Measured is one measured configuration of a calibration file
// (testdata/calibration.jsonl): the run's settings, its model config and
// what torch and NVML reported for it.
type Measured struct {
	ID              string         `json:"id"`
	Batch           int            `json:"batch"`
	Seq             int            `json:"seq"`
	Precision       string         `json:"precision"`
	Optim           *string        `json:"optim"`
	Mode            string         `json:"mode"`
	Params          int64          `json:"params"`
	ModelStateBytes int64          `json:"model_state_bytes"`
	PeakAllocated   int64          `json:"peak_allocated"`
	PeakReserved    int64          `json:"peak_reserved"`
	NVMLProcessUsed int64          `json:"nvml_process_used"`
	ModelConfig     map[string]any `json:"model_config"`
	// raw is the whole line: the optional knobs a row may carry
	// (accumulation, checkpointing, generation, attention, sharding, ...).
	raw map[string]any
}

// ReadCalibration reads a calibration file, one JSON object a line, leaving
// out its "_context" line (which describes the capture, not a run).
func ReadCalibration(path string) ([]Measured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []Measured
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r Measured
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if err := json.Unmarshal(sc.Bytes(), &r.raw); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if r.ID != "_context" {
			rows = append(rows, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return rows, nil
}

// Estimate runs the estimator on the measured run's own model config and
// settings, in a fresh process (bench/device/estimate_measure.py measures
// each configuration in its own).
func (m Measured) Estimate() (*Result, error) {
	return m.estimateIn(nil)
}

func (m Measured) estimateIn(p *process) (*Result, error) {
	md, err := models.FromConfigMap(m.ModelConfig)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.ID, err)
	}
	o, err := m.Options()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.ID, err)
	}
	var res *Result
	if p == nil {
		res, err = Estimate(md, o)
	} else {
		res, err = p.run(md, o)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.ID, err)
	}
	return res, nil
}

// EstimateOneProcess estimates rows measured one after another, in their
// order, in one Python process (see process). The H200 capture
// (testdata/calibration.jsonl) was: replayed so, the weights each row's
// load leaves allocated equal its model_state_bytes to the byte where a
// fresh process differs (the amp-bf16 GPT-2 row's wte is cut from the
// segment the previous row's autograd-thread workspace pinned, so it has
// no 799,744-byte unsplit tail), and its rows' peaks leave the workspaces
// out.
func EstimateOneProcess(rows []Measured) ([]*Result, error) {
	p := &process{}
	out := make([]*Result, 0, len(rows))
	for _, r := range rows {
		res, err := r.estimateIn(p)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}
