package store

import (
	"database/sql"
	"encoding/json"
)

// Row scanners shared by the queries and the downsampler.

func scanRun(rows *sql.Rows) (Run, error) {
	var r Run
	var rowid, start, sst int64
	var end, code, sig, last sql.NullInt64
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
	if end.Valid {
		t := fromMS(end.Int64)
		r.End = &t
	}
	if last.Valid {
		t := fromMS(last.Int64)
		r.LastSample = &t
	}
	if code.Valid {
		v := int(code.Int64)
		r.ExitCode = &v
	}
	if sig.Valid {
		v := int(sig.Int64)
		r.Signal = &v
	}
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

func scanSample(rows *sql.Rows) (Sample, error) {
	var s Sample
	var t int64
	var cols [8]sql.NullInt64
	var gpu []byte
	var extra sql.NullString
	err := rows.Scan(&t, &s.Resolution, &cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5], &cols[6], &cols[7], &gpu, &extra)
	if err != nil {
		return s, err
	}
	s.Time = fromMS(t)
	dst := []**int64{&s.CgroupUsage, &s.HostAvailable, &s.PSSTotal, &s.RSSTotal, &s.SwapTotal, &s.AllocAllocated, &s.AllocReserved, &s.Step}
	for i, c := range cols {
		if c.Valid {
			v := c.Int64
			*dst[i] = &v
		}
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
	var rank sql.NullInt64
	var secs sql.NullFloat64
	var cols [4]sql.NullInt64
	if err := rows.Scan(&t, &s.Step, &s.PID, &rank, &s.Steps, &secs, &cols[0], &cols[1], &cols[2], &cols[3]); err != nil {
		return s, err
	}
	s.Time = fromMS(t)
	if rank.Valid {
		v := int(rank.Int64)
		s.Rank = &v
	}
	if secs.Valid {
		v := secs.Float64
		s.StepSeconds = &v
	}
	dst := []**int64{&s.Allocated, &s.Reserved, &s.PeakAllocated, &s.PeakReserved}
	for i, c := range cols {
		if c.Valid {
			v := c.Int64
			*dst[i] = &v
		}
	}
	return s, nil
}
