package procfs

// /proc/<pid>/oom_score ("667") and /proc/<pid>/oom_score_adj ("-1000"
// .. "1000"): the kernel OOM killer's badness and the user's bias.

import (
	"bytes"
	"fmt"
	"strconv"
)

// OOMScore is the OOM killer's view of a process.
type OOMScore struct {
	Score int `json:"oom_score"`
	Adj   int `json:"oom_score_adj"`
}

// OOMScore reads <root>/<pid>/oom_score and oom_score_adj.
func (f FS) OOMScore(pid int) (OOMScore, error) {
	score, err := f.readInt(f.pidPath(pid, "oom_score"))
	if err != nil {
		return OOMScore{}, err
	}
	adj, err := f.readInt(f.pidPath(pid, "oom_score_adj"))
	if err != nil {
		return OOMScore{}, err
	}
	return OOMScore{Score: score, Adj: adj}, nil
}

func (f FS) readInt(path string) (int, error) {
	var n int
	err := withFile(path, func(b []byte) error {
		var perr error
		if n, perr = parseInt(b); perr != nil {
			return fmt.Errorf("parse %s: %w", path, perr)
		}
		return nil
	})
	return n, err
}

func parseInt(b []byte) (int, error) {
	s := string(bytes.TrimSpace(b))
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("not an integer: %q", s)
	}
	return n, nil
}
