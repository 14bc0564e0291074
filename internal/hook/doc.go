// Package hook is torchmem's side of the in-process PyTorch hook: the wire
// protocol (versioned JSON lines), the Unix-socket server hooked processes
// connect to, and Install, which writes the embedded Python package (see
// internal/hook/python) into a private directory and returns the
// environment a job needs to load it.
//
// How the supervisor uses it:
//
//	dir, _ := os.MkdirTemp("", "torchmem-run-") // 0700; keep the path short (socket paths are limited to 107 bytes)
//	env, err := hook.Install(dir, hook.InstallOptions{Interval: time.Second, RecordHistory: 0})
//	srv, err := hook.Listen(dir, hook.Options{Accept: func(p hook.Peer) bool { return inJobCgroup(p.PID) }})
//	defer srv.Close()
//	cmd.Env = hook.MergeEnv(os.Environ(), env) // prepends PYTHONPATH
//	for m := range srv.Messages() { switch m.Type { case hook.TypeStats: ... } }
//	srv.Send(pid, hook.Command{Type: hook.CmdCleanup}) // answered by a TypeAck message
//
// Peers are identified by SO_PEERCRED (kernel-verified pid/uid/gid), never by
// what a process says about itself; a connection whose peer Accept rejects is
// closed before any line is read. A server that stops reading never harms the
// job: the hook drops messages it cannot send and goes quiet when the socket
// closes.
package hook
