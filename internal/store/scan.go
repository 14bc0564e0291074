package store

import (
	"database/sql"
	"encoding/json"
	"time"
)

// Row scanners shared by the queries and the downsampler.

func scanRun(rows *sql.Rows) (Run, error) {
	var r Run
	var rowid, start, sst int64
	var end, last sql.Null[int64]
	var code, sig sql.Null[int]
	var cmd string
	var labels, limits, peaks, summary sql.NullString
	var status string
	err := rows.Scan(&rowid, &r.ID, &cmd, &r.Cwd, &r.Host, &r.User, &start, &end, &status, &code, &sig,
		&labels, &limits, &peaks, &summary, &r.SupervisorPID, &sst, &r.BootID, &r.Samples, &last)
	if err != nil {
		return r, err
	}
	r.Status, r.Start, r.SupervisorStart = Status(status), fromMS(start), uint64(sst)
	_ = json.Unmarshal([]byte(cmd), &r.Command)
	r.End, r.LastSample = timeOrNil(end), timeOrNil(last)
	r.ExitCode, r.Signal = ptrOrNil(code), ptrOrNil(sig)
	if labels.Valid {
		_ = json.Unmarshal([]byte(labels.String), &r.Labels)
	}
	if peaks.Valid {
		_ = json.Unmarshal([]byte(peaks.String), &r.Peaks)
	}
	if limits.Valid {
		r.Limits = json.RawMessage(limits.String)
	}
	if summary.Valid {
		r.Summary = json.RawMessage(summary.String)
	}
	return r, nil
}

// ptrOrNil is a nullable column as an optional field: nil for NULL.
func ptrOrNil[T any](n sql.Null[T]) *T {
	if !n.Valid {
		return nil
	}
	v := n.V // a copy: taking &n.V would move n to the heap even for NULL
	return &v
}

// timeOrNil is a nullable millisecond column as an optional time.
func timeOrNil(n sql.Null[int64]) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMS(n.V)
	return &t
}

func scanSample(rows *sql.Rows) (Sample, error) {
	var s Sample
	var t int64
	var cols [8]sql.Null[int64]
	var gpu []byte
	var extra sql.NullString
	err := rows.Scan(&t, &s.Resolution, &cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5], &cols[6], &cols[7], &gpu, &extra)
	if err != nil {
		return s, err
	}
	s.Time = fromMS(t)
	dst := []**int64{&s.CgroupUsage, &s.HostAvailable, &s.PSSTotal, &s.RSSTotal, &s.SwapTotal, &s.AllocAllocated, &s.AllocReserved, &s.Step}
	for i, c := range cols {
		*dst[i] = ptrOrNil(c)
	}
	if len(gpu) > 0 {
		if s.GPUUsed, s.GPUJobUsed, err = decodeGPU(gpu); err != nil {
			return s, err
		}
	}
	if extra.Valid {
		_ = json.Unmarshal([]byte(extra.String), &s.Extra)
	}
	return s, nil
}

func scanStep(rows *sql.Rows) (Step, error) {
	var s Step
	var t int64
	var rank sql.Null[int]
	var secs sql.Null[float64]
	var cols [6]sql.Null[int64]
	if err := rows.Scan(&t, &s.Step, &s.PID, &rank, &s.Steps, &secs, &cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5]); err != nil {
		return s, err
	}
	s.Time, s.Rank, s.StepSeconds = fromMS(t), ptrOrNil(rank), ptrOrNil(secs)
	dst := []**int64{&s.Allocated, &s.Reserved, &s.PeakAllocated, &s.PeakReserved, &s.StepPeakAllocated, &s.StepPeakReserved}
	for i, c := range cols {
		*dst[i] = ptrOrNil(c)
	}
	return s, nil
}
