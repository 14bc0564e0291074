// Command storebench simulates a long run written to the history store at
// a given sampling rate, with a simulated clock so 24 hours take about a
// minute, and reports the database size as it grows (after a WAL
// checkpoint), with the default downsampling tiers.
//
//	go run ./bench/storebench -hours 24 -hz 10 -steps-hz 5
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/torchmem/torchmem/internal/store"
)

func main() {
	hours := flag.Float64("hours", 24, "simulated run length")
	hz := flag.Float64("hz", 10, "samples per second")
	stepsHz := flag.Float64("steps-hz", 5, "step rows per second (one process)")
	raw := flag.Bool("no-downsample", false, "keep every sample (store.Options.Tiers empty)")
	flag.Parse()
	if err := run(*hours, *hz, *stepsHz, *raw); err != nil {
		fmt.Fprintln(os.Stderr, "storebench:", err)
		os.Exit(1)
	}
}

func run(hours, hz, stepsHz float64, raw bool) error {
	dir, err := os.MkdirTemp("", "tmsb")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "torchmem.db")
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	now := t0
	opts := store.Options{Now: func() time.Time { return now }, FlushInterval: time.Hour}
	if raw {
		opts.Tiers = []store.Tier{}
	}
	db, err := store.Open(path, opts)
	if err != nil {
		return err
	}
	r := &store.Run{Command: []string{"python", "train.py"}, Start: t0}
	if err := db.CreateRun(r); err != nil {
		return err
	}
	tick := time.Duration(float64(time.Second) / hz)
	stepEvery := int(hz / stepsHz)
	if stepEvery < 1 {
		stepEvery = 1
	}
	end := t0.Add(time.Duration(hours * float64(time.Hour)))
	wall := time.Now()
	var n, appendNS int64
	nextHour := t0.Add(time.Hour)
	fmt.Printf("%-6s %12s %12s %10s\n", "hour", "db bytes", "sample rows", "MiB/hour")
	prevSize := int64(0)
	for i := int64(0); now.Before(end); i++ {
		now = t0.Add(time.Duration(i) * tick)
		a := time.Now()
		db.AppendSample(r.ID, sample(now, i))
		if int(i)%stepEvery == 0 {
			db.AppendStep(r.ID, store.Step{Time: now, Step: i / int64(stepEvery), PID: 4242, Steps: 1, Allocated: store.Int(30<<30 + i), Reserved: store.Int(40 << 30)})
		}
		appendNS += time.Since(a).Nanoseconds()
		n++
		if i%int64(hz) == 0 { // flush once a simulated second
			a := time.Now()
			if err := db.Flush(); err != nil {
				return err
			}
			appendNS += time.Since(a).Nanoseconds()
		}
		if i%int64(60*hz) == 0 { // compact once a simulated minute
			if err := db.Compact(); err != nil {
				return err
			}
		}
		if !now.Before(nextHour) {
			size, rows, err := measure(db, path, r.ID)
			if err != nil {
				return err
			}
			h := now.Sub(t0).Hours()
			fmt.Printf("%-6.0f %12d %12d %10.2f\n", h, size, rows, float64(size-prevSize)/(1<<20))
			prevSize = size
			nextHour = nextHour.Add(time.Hour)
		}
	}
	if err := dbstat(db); err != nil {
		fmt.Println("dbstat:", err)
	}
	if err := db.FinishRun(r.ID, store.Finish{End: now, Status: store.StatusExited, ExitCode: new(int)}); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	fmt.Printf("%d samples in %.1f s wall; append+flush %.1f us per sample\n", n, time.Since(wall).Seconds(), float64(appendNS)/float64(n)/1e3)
	return nil
}

func measure(db *store.DB, path, id string) (int64, int64, error) {
	if _, err := db.SQL().Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return 0, 0, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	var rows int64
	err = db.SQL().QueryRow("SELECT COUNT(*) FROM samples").Scan(&rows)
	return st.Size(), rows, err
}

// sample is what a GPU job's sampler records: cgroup, host, PSS, RSS,
// allocator, step and two GPUs (device used and job used).
func sample(t time.Time, i int64) store.Sample {
	return store.Sample{Time: t, CgroupUsage: store.Int(8<<30 + i*4096%(1<<30)), HostAvailable: store.Int(200<<30 - i*4096%(1<<30)),
		PSSTotal: store.Int(7<<30 + i%(1<<20)), RSSTotal: store.Int(7<<30 + i%(1<<21)), AllocAllocated: store.Int(30<<30 + i*512%(1<<30)),
		AllocReserved: store.Int(40 << 30), Step: store.Int(i / 10),
		GPUUsed: []*int64{store.Int(41<<30 + i%(1<<24)), store.Int(41<<30 + i%(1<<23))}, GPUJobUsed: []*int64{store.Int(40<<30 + i%(1<<24)), store.Int(40<<30 + i%(1<<22))}}
}

// dbstat prints bytes per table and index, when SQLite has the dbstat table.
func dbstat(db *store.DB) error {
	rows, err := db.SQL().Query("SELECT name, SUM(pgsize), SUM(unused) FROM dbstat GROUP BY name ORDER BY 2 DESC")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var size, unused int64
		if err := rows.Scan(&name, &size, &unused); err != nil {
			return err
		}
		fmt.Printf("  %-16s %10d bytes (%d unused)\n", name, size, unused)
	}
	return rows.Err()
}
