package store

import (
	"database/sql"
	"encoding/json"
)

// Samples with maxPoints merges rows into time buckets inside SQLite, in
// one statement (one consistent read while the supervisor writes): the
// scalar series are MAX/MIN per bucket, the packed GPU column and the Extra
// JSON go through aggregates of ours (aggfunc.go) that read each row's value
// without allocating. Scanning every row into a Sample in Go and merging
// there allocated ~30 values a row and cost ~3 µs a row.

// samplesBucketed returns the rows of run with lo <= t_ms <= hi merged into
// buckets of w ms starting at t0 (the first row's time): maxima, minimum of
// host_available, Resolution the larger of w and the coarsest row's.
func (db *DB) samplesBucketed(run, lo, hi, t0, w int64) ([]Sample, error) {
	rows, err := db.sql.Query(`SELECT (t_ms-?1)/?2 AS b, MAX(res_ms), MAX(cgroup_usage), MIN(host_available), MAX(pss_total),
		MAX(rss_total), MAX(swap_total), MAX(alloc_allocated), MAX(alloc_reserved), MAX(step), `+gpuMaxFunc+`(gpu), `+extraMaxFunc+`(extra)
		FROM samples WHERE run=?3 AND t_ms BETWEEN ?4 AND ?5 GROUP BY b ORDER BY b`, t0, w, run, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Sample
	for rows.Next() {
		var s Sample
		var b int64
		var cols [8]sql.NullInt64
		var gpu []byte
		var extra sql.NullString
		if err := rows.Scan(&b, &s.Resolution, &cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5], &cols[6], &cols[7], &gpu, &extra); err != nil {
			return nil, err
		}
		s.Time, s.Resolution = fromMS(t0+b*w), max(w, s.Resolution)
		dst := []**int64{&s.CgroupUsage, &s.HostAvailable, &s.PSSTotal, &s.RSSTotal, &s.SwapTotal, &s.AllocAllocated, &s.AllocReserved, &s.Step}
		for i, c := range cols {
			if c.Valid {
				v := c.Int64
				*dst[i] = &v
			}
		}
		if len(gpu) > 0 {
			if s.GPUUsed, s.GPUJobUsed, err = decodeGPU(gpu); err != nil {
				return nil, err
			}
		}
		if extra.Valid {
			if err := json.Unmarshal([]byte(extra.String), &s.Extra); err != nil {
				return nil, err // we wrote it, from a map of finite floats
			}
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
