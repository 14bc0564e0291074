package oomexplain

import (
	"strings"
	"testing"
)

func TestGroup(t *testing.T) {
	// testdata/cuda/cuda-oom-fragmentation-message.txt from 8 ranks.
	msg := strings.TrimSpace(readTestdata(t, "cuda/cuda-oom-fragmentation-message.txt"))
	var b strings.Builder
	for r := 0; r < 8; r++ {
		for _, l := range strings.Split(msg, "\n") {
			b.WriteString("[rank" + string(rune('0'+r)) + "]: " + l + "\n")
		}
	}
	incs := parseString(t, b.String())
	g := Group(incs)
	if len(incs) != 8 || len(g) != 1 || g[0].Count != 8 || len(g[0].Ranks) != 8 || g[0].Ranks[7] != 7 {
		t.Fatalf("%d incidents grouped into %d: %+v", len(incs), len(g), g)
	}
	if incs[0].Ranks != nil || incs[0].Count != 1 {
		t.Errorf("Group modified its input")
	}

	// Three identical "Task in" lines (testdata/kernel/dmesg-T-zh-4.x.txt): one story, count 3.
	zh := Group(parseFile(t, "kernel/dmesg-T-zh-4.x.txt"))
	if len(zh) != 1 || zh[0].Count != 3 || zh[0].Ranks != nil {
		t.Errorf("zh: %d incidents, count %d", len(zh), zh[0].Count)
	}

	// Two containers' memcg OOMs with no victim in the excerpt (corpus
	// kernel/013, dotnet/coreclr #16906) stay apart.
	grep := "memory: usage 262144kB, limit 262144kB, failcnt 2472\nMemory cgroup stats for /docker/7e29: rss:249452KB\n" +
		"memory: usage 262144kB, limit 262144kB, failcnt 3078\nMemory cgroup stats for /docker/43bf: rss:247920KB\n"
	if d := Group(parseString(t, grep)); len(d) != 2 {
		t.Errorf("two containers: %d incidents", len(d))
	}

	// Kills of different pids (harmony-one/harmony #3709) stay apart.
	if h := Group(parseString(t, harmonyTwoKills)); len(h) != 2 {
		t.Errorf("harmony: %d incidents", len(h))
	}

	// The same DataLoader failure from a retry loop, far apart (corpus
	// host/031, yolov3 with PyTorch 1.0), is one; another pid is not.
	line := "RuntimeError: DataLoader worker (pid 2064) is killed by signal: Killed.\n"
	gap := strings.Repeat("step 1 | loss 2.41\n", hostDedupLines+10)
	other := strings.Replace(line, "2064", "2065", 1)
	dl := parseString(t, line+gap+line+gap+other)
	gd := Group(dl)
	if len(dl) != 3 || len(gd) != 2 || gd[0].Count != 2 || gd[1].PIDs[0] != 2065 {
		t.Errorf("retry loop: %d -> %d %+v", len(dl), len(gd), gd)
	}
}
