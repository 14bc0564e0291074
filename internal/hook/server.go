package hook

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// SocketName is the socket's file name inside the run directory.
const SocketName = "hook.sock"

// Options configure a Server.
type Options struct {
	// Accept decides whether a connecting process belongs to the job
	// (e.g. its pid is in the job's cgroup). Nil accepts only processes of
	// the server's own uid.
	Accept func(Peer) bool
	// Buffer is the capacity of the Messages channel (default 1024). When it
	// is full, stats and step messages are dropped (counted in Dropped);
	// other messages wait.
	Buffer int
	// Now is the clock stamped on Message.Received and that the Budget's
	// rates run on (default time.Now).
	Now func() time.Time
	// Budget bounds what the peers may send (zero: DefaultBudget).
	Budget Budget
}

// Server accepts hooked processes on a Unix socket and delivers their
// messages on one channel.
type Server struct {
	ln      *net.UnixListener
	path    string
	opts    Options
	msgs    chan Message
	nextID  atomic.Int64
	dropped atomic.Int64
	rejects atomic.Int64
	budget  *budgeter

	mu     sync.Mutex
	conns  map[int]*peerConn // by peer pid
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
}

type peerConn struct {
	peer   Peer
	conn   *net.UnixConn
	wmu    sync.Mutex
	worker bool // said hello as a DataLoader worker; guarded by Server.mu
}

// Listen creates dir/hook.sock (mode 0600) and starts accepting. dir should
// be the private 0700 directory Install wrote to.
func Listen(dir string, opts Options) (*Server, error) {
	path := filepath.Join(dir, SocketName)
	if len(path) > 107 {
		return nil, fmt.Errorf("hook socket path %s is %d bytes, over the 107-byte limit of Unix sockets: use a shorter run directory", path, len(path))
	}
	_ = os.Remove(path) // a stale socket from a dead run
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on hook socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod hook socket %s: %w", path, err)
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 1024
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Accept == nil {
		uid := os.Getuid()
		opts.Accept = func(p Peer) bool { return p.UID == uid }
	}
	s := &Server{ln: ln, path: path, opts: opts, msgs: make(chan Message, opts.Buffer), conns: map[int]*peerConn{},
		done: make(chan struct{}), budget: newBudgeter(opts.Budget)}
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// Path returns the socket path (what TORCHMEM_HOOK_SOCKET points to).
func (s *Server) Path() string { return s.path }

// Messages returns the channel of decoded messages from all peers, plus a
// TypeDisconnect message when a peer's connection ends. It is closed by Close.
func (s *Server) Messages() <-chan Message { return s.msgs }

// Dropped returns how many stats/step messages were dropped because the
// Messages channel was full.
func (s *Server) Dropped() int64 { return s.dropped.Load() }

// Rejected returns how many connections Accept refused.
func (s *Server) Rejected() int64 { return s.rejects.Load() }

// OverBudget returns what the Budget dropped, by message type ("connection"
// for connections over MaxPeers), and how many messages had fields cut
// (Message.Clamp).
func (s *Server) OverBudget() (dropped map[string]int64, truncated int64) {
	return s.budget.counts()
}

// ErrNoPeer is returned by Send for a pid that is not connected.
var ErrNoPeer = errors.New("process is not connected to the hook")

// Send writes a command to the process pid and returns the command ID the
// Ack will carry. It does not wait for the Ack.
func (s *Server) Send(pid int, c Command) (int64, error) {
	if c.ID == 0 {
		c.ID = s.nextID.Add(1)
	}
	line, err := EncodeCommand(c)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	pc := s.conns[pid]
	s.mu.Unlock()
	if pc == nil {
		return 0, fmt.Errorf("send %s to pid %d: %w", c.Type, pid, ErrNoPeer)
	}
	pc.wmu.Lock()
	defer pc.wmu.Unlock()
	_ = pc.conn.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := pc.conn.Write(line); err != nil {
		return 0, fmt.Errorf("send %s to pid %d: %w", c.Type, pid, err)
	}
	return c.ID, nil
}

// Broadcast sends c to every connected process that said hello as a
// non-worker and returns the pids it reached.
func (s *Server) Broadcast(c Command) []int {
	var pids []int
	s.mu.Lock()
	var targets []int
	for pid, pc := range s.conns {
		if !pc.worker {
			targets = append(targets, pid)
		}
	}
	s.mu.Unlock()
	for _, pid := range targets {
		if _, err := s.Send(pid, c); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Close stops accepting, closes every connection, removes the socket and
// closes the Messages channel once all readers have stopped.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	err := s.ln.Close()
	for _, c := range s.conns {
		c.conn.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	close(s.msgs)
	_ = os.Remove(s.path)
	return err
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.AcceptUnix()
		if err != nil {
			return // closed
		}
		peer, err := peerCred(conn)
		if err != nil || !s.opts.Accept(peer) {
			s.rejects.Add(1)
			conn.Close()
			continue
		}
		pc := &peerConn{peer: peer, conn: conn}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.Close()
			return
		}
		if n := s.budget.b.MaxPeers; n > 0 && len(s.conns) >= n && s.conns[peer.PID] == nil {
			s.mu.Unlock()
			s.budget.drop("connection")
			conn.Close()
			continue
		}
		if old := s.conns[peer.PID]; old != nil {
			old.conn.Close() // an exec'd process reconnecting under the same pid
		}
		s.conns[peer.PID] = pc
		s.wg.Add(1)
		s.mu.Unlock()
		go s.readLoop(pc)
	}
}

// peerCred reads the kernel's record of who connected.
func peerCred(conn *net.UnixConn) (Peer, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Peer{}, err
	}
	if cerr != nil {
		return Peer{}, fmt.Errorf("SO_PEERCRED: %w", cerr)
	}
	return Peer{PID: int(cred.Pid), UID: int(cred.Uid), GID: int(cred.Gid)}, nil
}

func (s *Server) readLoop(pc *peerConn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		if s.conns[pc.peer.PID] == pc {
			delete(s.conns, pc.peer.PID)
		}
		s.mu.Unlock()
		pc.conn.Close()
		s.deliver(Message{Peer: pc.peer, Received: s.opts.Now(), Type: TypeDisconnect, Version: ProtocolVersion})
	}()
	r := bufio.NewReaderSize(pc.conn, 64<<10)
	for {
		line, err := readLine(r)
		if err != nil {
			return
		}
		if line == nil {
			continue // over-long line dropped
		}
		m, err := ParseLine(line)
		if err != nil {
			continue
		}
		m.Peer = pc.peer
		m.Received = s.opts.Now()
		m.Raw = nil // not kept: it would double what a queued message holds
		if !s.budget.allow(m.Type, m.Received) {
			continue
		}
		if m.Clamp() {
			s.budget.cut()
		}
		if m.Hello != nil {
			s.mu.Lock()
			pc.worker = m.Hello.Worker
			s.mu.Unlock()
		}
		s.deliver(m)
	}
}

// deliver drops periodic samples rather than block a peer when the consumer
// lags; anything else (hello, oom, exception, ack) waits for room.
func (s *Server) deliver(m Message) {
	if m.Type == TypeStats || m.Type == TypeStep {
		select {
		case s.msgs <- m:
		default:
			s.dropped.Add(1)
		}
		return
	}
	select {
	case s.msgs <- m:
	case <-s.done:
	}
}

// readLine returns one line without the newline; nil (and no error) for a
// line longer than MaxLineBytes, which is skipped.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			return nil, err
		}
		if !tooLong {
			buf = append(buf, chunk...)
			if len(buf) > MaxLineBytes {
				tooLong, buf = true, nil
			}
		}
		if !isPrefix {
			break
		}
	}
	if tooLong {
		return nil, nil
	}
	return buf, nil
}
