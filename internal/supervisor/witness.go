package supervisor

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// WitnessArg makes torchmem act as the SIGINT witness of an interactive
// run. Go's os/signal does not say who sent a signal (si_code, si_pid), so
// when the job shares torchmem's process group (the terminal's foreground
// group) torchmem cannot tell a Ctrl-C, which the terminal sends to the
// whole group and so to the job too, from a `kill -INT` of torchmem alone,
// which the job never gets. The witness is a small process in the same
// group: it writes one byte to fd 3 for each SIGINT it gets, so a SIGINT
// that reached torchmem but not the witness was sent to torchmem alone
// and is forwarded to the job.
const WitnessArg = "__torchmem-sigwitness"

// witnessWait is how long torchmem waits for the witness's byte: the
// terminal signals the group's processes in one kernel call, so it comes
// within a few ms on an idle machine; on one whose cores a job's
// DataLoader workers keep busy the witness may wait that long to be
// scheduled, and a byte missed forwards a second SIGINT to a job that
// already has one. A `kill -INT` of torchmem alone waits this long.
const witnessWait = time.Second

// witnessReadyWait bounds the wait for the witness to be listening (its
// first byte): a SIGINT before that would kill it, and every Ctrl-C would
// then look like a signal to torchmem alone.
const witnessReadyWait = 5 * time.Second

// The witness's bytes: it is listening; it got a SIGINT.
const (
	witnessReady  byte = 0
	witnessSIGINT byte = 1
)

// Witness is the witness's side; it returns when the supervisor is gone.
func Witness() int {
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTSTP) // Ctrl-\ and Ctrl-Z are not for us
	out := os.NewFile(3, "torchmem-witness")
	if _, err := out.Write([]byte{witnessReady}); err != nil {
		return 0
	}
	for sig := range sigs {
		if sig != syscall.SIGINT {
			continue
		}
		if _, err := out.Write([]byte{witnessSIGINT}); err != nil {
			return 0 // the supervisor closed its end
		}
	}
	return 0
}

// witness is the supervisor's handle on its witness process.
type witness struct {
	cmd  *exec.Cmd
	done chan struct{}
	got  chan struct{} // one value per SIGINT the witness got
}

// startWitness starts the witness in torchmem's own process group; nil
// (and the old assumption: every SIGINT came from the terminal) when it
// cannot.
func (s *sup) startWitness() *witness {
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	args := append(append([]string{}, s.cfg.SelfArgs...), WitnessArg)
	cmd := exec.Command(s.cfg.Self, args...)
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	done, err := launch(cmd)
	w.Close()
	if err != nil {
		r.Close()
		return nil
	}
	wt := &witness{cmd: cmd, done: done, got: make(chan struct{}, 16)}
	ready := make(chan struct{})
	go func() {
		defer r.Close()
		b := make([]byte, 16)
		unready := ready
		for {
			n, err := r.Read(b)
			for _, c := range b[:n] {
				if c == witnessReady {
					if unready != nil {
						close(unready)
						unready = nil
					}
				} else {
					wt.got <- struct{}{}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	select { // not listening: the old assumption, every SIGINT from the terminal
	case <-ready:
		return wt
	case <-done: // it exited first
		return nil
	case <-time.After(witnessReadyWait):
		wt.stop()
		return nil
	}
}

// sawSIGINT: the witness got the SIGINT torchmem just got, so it was sent
// to the whole process group (the terminal's Ctrl-C) and the job has it.
func (wt *witness) sawSIGINT() bool {
	select {
	case <-wt.got:
		return true
	case <-time.After(witnessWait):
		return false
	}
}

func (wt *witness) stop() {
	_ = wt.cmd.Process.Kill()
	<-wt.done
}

// jobGotSIGINT says whether the SIGINT torchmem got reached the job too:
// in an interactive run, when torchmem's group is the terminal's
// foreground group and the witness (same group) got it as well.
func (s *sup) jobGotSIGINT() bool {
	if !s.cfg.Interactive {
		return false
	}
	if fg, err := unix.IoctlGetInt(int(s.cfg.Stdin.Fd()), unix.TIOCGPGRP); err == nil && fg != unix.Getpgrp() {
		return false // torchmem was put in the background: no terminal signal reaches the job
	}
	if s.wit == nil {
		return true
	}
	return s.wit.sawSIGINT()
}
