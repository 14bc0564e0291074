package oomexplain

// The shell's report of a child killed by SIGKILL (usually the OOM
// killer, whose own report is in the kernel log, not here). Real forms
// (the corpus under testdata/corpus/host, and the tests' sources):
//
//	Killed                                                   (bash/sh, a foreground job)
//	Killed: 9                                                (macOS shells)
//	./train.sh: line 1:  7364 Killed                  python3 train_Donly.py --name=D0
//	/var/spool/slurmd/job00191/slurm_script: line 28:  8156 Killed                  python3 main.py ...
//	bash: line 1: 12345 Killed                  python train.py
//	943 Killed                  python train.py
//	[1]+  Killed                  python train.py            (bash job control)
//	[1]  + 12345 killed     python train.py                  (zsh job control)
//	zsh: killed     python train.py
//	 5/15 [02:32<05:36, 33.69s/it]zsh: killed     python3 commandR.py   (glued to a progress bar)
//
// "Killed" inside a longer sentence is someone else's: the kernel's
// "Killed process 123 (python)", the DataLoader's "killed by signal:
// Killed.". A bare "Killed" line inside an open kernel report, or with a
// kernel timestamp, is the kernel's too.

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	// "[script: ]line N: PID Killed  command" and "PID Killed  command".
	reShellPID = regexp.MustCompile(`(?:^|: line \d+:)\s*(\d+) Killed\s+(\S.*)$`)
	// bash "[1]+  Killed  command", zsh "[1]  + 12345 killed  command".
	reShellJob = regexp.MustCompile(`^\[\d+\]\s*[+-]?\s+(?:(\d+) )?\s*[Kk]illed\s+(\S.*)$`)
	// zsh, also glued to a progress bar: "5/15 [02:32<05:36, 33.69s/it]zsh: killed     python3 commandR.py".
	reZsh = regexp.MustCompile(`zsh: killed\s+(\S.*)$`)
)

// shellKill recognises a shell's kill report and returns its pid (0 when
// not given) and command.
func shellKill(t string) (pid int, program string, ok bool) {
	if t == "Killed" || t == "Killed: 9" || strings.HasSuffix(t, "]Killed") && strings.Contains(t, "|") {
		return 0, "", true // the last, a tqdm bar's line ended by the shell's report
	}
	if strings.Contains(t, `\n`) {
		// An escaped newline: the shell's line quoted inside another
		// message (a Kubernetes "reason: OOMKilled message: ..." status),
		// which tells the story itself.
		return 0, "", false
	}
	for _, re := range []*regexp.Regexp{reShellPID, reShellJob} {
		if m := re.FindStringSubmatch(t); m != nil {
			pid, _ = strconv.Atoi(m[1])
			return pid, shellProgram(m[2]), true
		}
	}
	if m := reZsh.FindStringSubmatch(t); m != nil {
		return 0, shellProgram(m[1]), true
	}
	return 0, "", false
}

// shellProgram trims the command the shell echoed (bounded: a command
// line may be long).
func shellProgram(s string) string {
	s = strings.TrimRight(strings.TrimSpace(s), `"`)
	if len(s) > 256 {
		s = s[:256]
	}
	return s
}

// shell reports a shell kill line unless it belongs to a kernel report.
func (h *hostParser) shell(l *line, t string) {
	if l.HasUptime || l.Ident == "kernel" || h.p.kernelOpen() {
		return
	}
	pid, program, ok := shellKill(t)
	if !ok {
		return
	}
	f := &HostFailure{Signal: "Killed", SignalNumber: intPtr(9), Program: program, Message: t}
	var pids []int
	if pid > 0 {
		pids = []int{pid}
	}
	h.add(l, KindShellKilled, f, pids)
}
