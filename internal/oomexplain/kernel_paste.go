package oomexplain

// A report pasted from a terminal whose wraps were copied as padding: the
// screen row was filled with spaces up to the terminal's width, and the
// rest of the line follows on the same physical line (theyosh/TerrariumPI
// issue #155, a Raspberry Pi, corpus kernel/054):
//
//	[73353.819594] Out of memory: Kill process 5203 (python) score 891 or sacrifice                                                                                                                      child
//	[73353.819611] Killed process 5203 (python) total-vm:1050948kB, anon-rss:830288k                                                                                                                     B, file-rss:1760kB, shmem-rss:0kB

import "strings"

// wrapPad is the shortest run of spaces read as a wrap's padding: the
// report's own columns are at most 13 spaces apart (the task table's
// "%8lu         %5hd" with a small number).
var wrapPad = strings.Repeat(" ", 32)

// unpad rejoins the pieces of a line separated by a wrap's padding, as
// joinWrapped rejoins a wrap that became a newline. prefix is how many
// bytes of the physical line came before text (its stamp), so that a
// piece's width is the screen's. Leading and trailing spaces are kept.
func unpad(text string, prefix int) string {
	from := len(text) - len(strings.TrimLeft(text, " "))
	if !mayHoldPad(text[from:]) {
		return text
	}
	for n := 0; n < maxContinuations; n++ {
		i := strings.Index(text[from:], wrapPad)
		if i < 0 {
			break
		}
		i += from
		end := i + len(wrapPad)
		for end < len(text) && text[end] == ' ' {
			end++
		}
		if end == len(text) {
			break
		}
		text = joinWrapped(text[:i], text[end:], prefix+i)
		from = i
	}
	return text
}

// mayHoldPad: s may hold wrapPad. A run of len(wrapPad) spaces covers
// one of every len(wrapPad)-th bytes, so a line where none of those is a
// space holds none (most lines, seen without searching them).
func mayHoldPad(s string) bool {
	for i := len(wrapPad) - 1; i < len(s); i += len(wrapPad) {
		if s[i] == ' ' {
			return true
		}
	}
	return false
}
