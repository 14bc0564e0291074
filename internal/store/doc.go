// Package store is torchmem's embedded history: runs, their samples,
// events and optimizer steps, in one SQLite file (modernc.org/sqlite, no
// cgo) in WAL mode, so readers (torchmem runs/show/report/serve) never block
// the supervisor writing, and a crash at any point leaves a readable
// database holding everything up to the last flush.
//
// Writing (the supervisor):
//
//	db, err := store.Open(store.DefaultPath(), store.Options{})
//	run := &store.Run{Command: argv, Cwd: cwd, Start: time.Now(), Labels: store.LabelsFromEnv(os.Environ())}
//	err = db.CreateRun(run)              // assigns run.ID ("k3m9tq"), status running, records our pid+start time
//	db.AppendSample(run.ID, store.Sample{Time: t, CgroupUsage: store.Int(n), ...}) // buffered
//	db.AppendEvent(run.ID, store.Event{Time: t, Kind: "cleanup", Source: "policy", Message: "..."})
//	db.AppendStep(run.ID, store.Step{Time: t, Step: 120, PID: pid, Allocated: store.Int(a)})
//	db.UpdatePeaks(run.ID, peaks)        // keep peaks current: a lost supervisor still leaves them
//	err = db.FinishRun(run.ID, store.Finish{End: time.Now(), Status: store.StatusExited, ExitCode: &code, Summary: json})
//	db.Close()                           // flushes
//
// Appends are buffered and written in one transaction at least once per
// FlushInterval (default 1 s) by a background flusher, or at once by Flush;
// events wake the flusher. Old samples are downsampled (max per bucket) as
// the run goes: full resolution for the last 10 minutes, 1 s buckets
// after that, 10 s buckets after 6 hours (Options.Tiers).
//
// Reading (runs/show/report/serve):
//
//	runs, err := db.Runs(store.RunFilter{Limit: 20})
//	run, err := db.Run("k3m")             // exact id, unique prefix, or "last"
//	pts, err := db.Samples(run.ID, from, to, 2000) // ≤ 2000 points, max per time bucket
//	evs, err := db.Events(run.ID)
//	n, err := db.CountEvents(run.ID, "cuda_oom")
//	steps, err := db.Steps(run.ID, 0)     // 0: all stored steps
//
// A run still "running" whose supervisor is gone (pid dead, pid reused
// with another start time, or another boot) is marked StatusSupervisorLost
// when the database is opened and before Runs/Run answer; its end time is
// its last sample's.
package store
