package oomexplain

import (
	"slices"
	"testing"
)

// winExited: buppt/ChineseNRE issue #41 (Anaconda on Windows, corpus host/047).
const winExited = `  File "D:\ruanjian\ana\lib\site-packages\torch\utils\data\dataloader.py", line 1024, in _try_get_data
    raise RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'.format(pids_str)) from e

RuntimeError: DataLoader worker (pid(s) 12048, 7612) exited unexpectedly
`

// linuxExited is the same failure with the paths of a Linux install.
const linuxExited = `  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1146, in _try_get_data
    raise RuntimeError(f'DataLoader worker (pid(s) {pids_str}) exited unexpectedly') from e
RuntimeError: DataLoader worker (pid(s) 12048, 7612) exited unexpectedly
`

func TestWindowsWorkersExited(t *testing.T) {
	tests := []struct {
		name, text string
		platform   string
		verdict    Verdict
		alts       []Verdict
	}{
		{"Windows paths above", winExited, PlatformWindows, VerdictWorkerExited, []Verdict{VerdictKilledSIGKILL}},
		{"Windows paths below (a chained traceback)", "RuntimeError: DataLoader worker (pid(s) 12048, 7612) exited unexpectedly\n" + winExited, PlatformWindows, VerdictWorkerExited, []Verdict{VerdictKilledSIGKILL}},
		{"Linux paths", linuxExited, "", VerdictKilledSIGKILL, []Verdict{VerdictSharedMemory, VerdictWorkerExited}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			incs := parseString(t, tc.text)
			if len(incs) != 1 || incs[0].Kind != KindDataLoaderExited {
				t.Fatalf("incidents %s", kindsOf(incs))
			}
			inc := incs[0]
			if inc.Failure.Platform != tc.platform || !equalInts(inc.PIDs, []int{12048, 7612}) {
				t.Errorf("platform %q pids %v", inc.Failure.Platform, inc.PIDs)
			}
			if e := inc.Explanation; e.Verdict != tc.verdict || !slices.Equal(e.Alternatives, tc.alts) {
				t.Errorf("verdict %s %v, want %s %v: %s", e.Verdict, e.Alternatives, tc.verdict, tc.alts, e.Summary)
			}
		})
	}
}

func TestWindowsPath(t *testing.T) {
	for s, want := range map[string]bool{
		`File "C:\Users\me\train.py", line 3`:                      true,
		`"path": "D:\\data\\train"`:                                true,
		`  File "..\env\Lib\site-packages\torch\serialization.py"`: true,
		`c:\temp`: true,
		`File "/usr/lib/python3/dist-packages/torch/x.py"`: false,
		`https://example.com/a`:                            false,
		`re:\s+ and (?:\d+)`:                               false,
		`ab1:\x`:                                           false,
	} {
		if got := windowsPath(s); got != want {
			t.Errorf("windowsPath(%q) = %v, want %v", s, got, want)
		}
	}
}
