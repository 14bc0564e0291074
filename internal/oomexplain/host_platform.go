package oomexplain

// The platform a training log was written on, from its tracebacks'
// paths (buppt/ChineseNRE issue #41, Anaconda on Windows, corpus host/047):
//
//	  File "D:\ruanjian\ana\lib\site-packages\torch\utils\data\dataloader.py", line 1024, in _try_get_data
//	    raise RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'.format(pids_str)) from e
//	RuntimeError: DataLoader worker (pid(s) 12048, 7612) exited unexpectedly
//
// Windows has no OOM killer and no SIGKILL: workers that "exited
// unexpectedly" there failed on their own (spawn start-up, commit memory)
// or were terminated, which the explainer says instead of a Linux kill.

import "strings"

// windowsContext: a Windows path this many lines before or after a
// failure is in the traceback around it.
const windowsContext = 64

// windowsPath: a drive path ("C:\Users\...", also JSON-escaped
// "C:\\Users") or a package path with backslashes ("\site-packages\").
func windowsPath(t string) bool {
	if strings.Contains(t, `\site-packages\`) {
		return true
	}
	for from := 0; ; {
		i := strings.Index(t[from:], `:\`)
		if i < 0 {
			return false
		}
		i += from
		if i >= 1 && isLetter(t[i-1]) && (i == 1 || !isLetter(t[i-2]) && !isDigit(t[i-2])) {
			return true
		}
		from = i + 2
	}
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// windows notes a Windows path at line no and marks the host incidents
// just before it (their traceback goes on below them).
func (h *hostParser) windows(no int) {
	h.winAt = no
	for i := len(h.recent) - 1; i >= 0; i-- {
		r := h.recent[i]
		if no-r.Line > windowsContext {
			return
		}
		r.Failure.Platform = PlatformWindows
	}
}
