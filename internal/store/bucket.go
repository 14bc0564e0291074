package store

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Samples with maxPoints merges rows into time buckets inside SQLite, in
// one statement (one consistent read while the supervisor writes): the
// scalar series are MAX/MIN per bucket, the packed GPU column and the Extra
// JSON go through aggregates of ours (aggfunc.go) that read each row's value
// without allocating. Scanning every row into a Sample in Go and merging
// there allocated ~30 values a row and cost ~3 µs a row.

// bucketQuery walks the buckets (k) in order and aggregates each one with
// an index range scan. A plain GROUP BY (t_ms-t0)/w cannot use the index
// order, so SQLite sorted every row of the range (spilling to temp files)
// before aggregating: that sort was most of the time. A scalar subquery
// returns one value, so each bucket comes back as a JSON array.
const bucketQuery = `WITH RECURSIVE k(b) AS (SELECT 0 UNION ALL SELECT b+1 FROM k WHERE b < ?6)
	SELECT k.b, (SELECT json_array(COUNT(*), MAX(res_ms), MAX(cgroup_usage), MIN(host_available), MAX(pss_total),
		MAX(rss_total), MAX(swap_total), MAX(alloc_allocated), MAX(alloc_reserved), MAX(step),
		hex(` + gpuMaxFunc + `(gpu)), json(` + extraMaxFunc + `(extra)))
	FROM samples WHERE run=?3 AND t_ms >= ?1+k.b*?2 AND t_ms < ?1+(k.b+1)*?2 AND t_ms BETWEEN ?4 AND ?5) FROM k`

// samplesBucketed returns the rows of sp merged into buckets of w ms from
// its first row: maxima, minimum of host_available, Resolution the larger
// of w and the coarsest row's.
func (db *DB) samplesBucketed(sp sampleSpan, w int64) ([]Sample, error) {
	rows, err := db.sql.Query(bucketQuery, sp.t0, w, sp.run, sp.lo, sp.hi, (sp.t1-sp.t0)/w)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Sample
	for rows.Next() {
		var b int64
		var agg string
		if err := rows.Scan(&b, &agg); err != nil {
			return nil, err
		}
		s, ok, err := parseBucket(agg)
		if err != nil {
			return nil, fmt.Errorf("bucket %d: %w", b, err)
		}
		if !ok {
			continue // no row in this bucket
		}
		s.Time, s.Resolution = fromMS(sp.t0+b*w), max(w, s.Resolution)
		out = append(out, s)
	}
	return out, rows.Err()
}

// parseBucket reads one json_array of bucketQuery; ok is false for an
// empty bucket.
func parseBucket(agg string) (s Sample, ok bool, err error) {
	var v [12]json.RawMessage
	if err := json.Unmarshal([]byte(agg), &v); err != nil {
		return s, false, err
	}
	var n int64
	if err := json.Unmarshal(v[0], &n); err != nil || n == 0 {
		return s, false, err
	}
	var res *int64
	dst := []**int64{&res, &s.CgroupUsage, &s.HostAvailable, &s.PSSTotal, &s.RSSTotal, &s.SwapTotal, &s.AllocAllocated, &s.AllocReserved, &s.Step}
	for i, d := range dst {
		if err := json.Unmarshal(v[i+1], d); err != nil {
			return s, false, err
		}
	}
	if res != nil {
		s.Resolution = *res
	}
	var gpuHex string
	if err := json.Unmarshal(v[10], &gpuHex); err != nil {
		return s, false, err
	}
	gpu, err := hex.DecodeString(gpuHex)
	if err != nil {
		return s, false, err
	}
	if s.GPUUsed, s.GPUJobUsed, err = decodeGPU(gpu); err != nil {
		return s, false, err
	}
	if err := json.Unmarshal(v[11], &s.Extra); err != nil {
		return s, false, err
	}
	return s, true, nil
}
