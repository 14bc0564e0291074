package oomexplain

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
)

// taskColumns reads the task table header, whose columns changed over
// time: "[ pid ]   uid  tgid total_vm      rss nr_ptes swapents
// oom_score_adj name" (3.10), "... rss nr_ptes nr_pmds swapents ..." (4.x),
// "... rss pgtables_bytes swapents ..." (4.15+), "... rss rss_anon
// rss_file rss_shmem pgtables_bytes swapents ..." (6.x).
func taskColumns(t string) []string {
	end := strings.IndexByte(t, ']')
	if end < 0 {
		return nil
	}
	return strings.Fields(t[end+1:])
}

// Columns of a task table whose header was not pasted, by the number of
// numbers before the name: 3.10 "uid tgid total_vm rss nr_ptes swapents
// oom_score_adj" and 4.15+ "... rss pgtables_bytes swapents ..." have 7,
// 4.x "... nr_ptes nr_pmds ..." 8, and 6.x "... rss rss_anon rss_file
// rss_shmem pgtables_bytes ..." 10.
var headerlessColumns = map[int][]string{
	7:  {"uid", "tgid", "total_vm", "rss", "pgtables_bytes", "swapents", "oom_score_adj", "name"},
	8:  {"uid", "tgid", "total_vm", "rss", "nr_ptes", "nr_pmds", "swapents", "oom_score_adj", "name"},
	10: {"uid", "tgid", "total_vm", "rss", "rss_anon", "rss_file", "rss_shmem", "pgtables_bytes", "swapents", "oom_score_adj", "name"},
}

// headerlessRow: "[  32209]  1000 32209  1395312   909707  7720960        0             0 harmony"
// (harmony-one/harmony issue #3709, `dmesg | grep harmony`, 5.4).
func headerlessRow(t string) bool {
	return len(t) > 3 && t[0] == '[' && (rowColumns(nil, t) != nil || cutRow(t))
}

// cutRow: a row whose name (and maybe last numbers) went to the next
// line, wrapped by a terminal: "[   7899]     0  7899  6546210  3842522
// 39899136  1039052" / " 0 python" (corpus kernel/019). It is read once
// the continuation completes it.
func cutRow(t string) bool {
	end := strings.IndexByte(t, ']')
	if end < 2 || strings.Trim(t[1:end], " 0123456789") != "" || strings.TrimSpace(t[1:end]) == "" {
		return false
	}
	n := 0
	for x := range strings.FieldsSeq(t[end+1:]) { // no slice: asked of every '[' line
		if n++; n > 10 || !isInt(x) {
			return false
		}
	}
	return n >= 4
}

// rowColumns returns cols, or when the header is missing the columns
// guessed from the row's shape (nil when it is no task row).
func rowColumns(cols []string, t string) []string {
	if cols != nil {
		return cols
	}
	end := strings.IndexByte(t, ']')
	if end < 2 || strings.Trim(t[1:end], " 0123456789") != "" || strings.TrimSpace(t[1:end]) == "" {
		return nil
	}
	// The leading numbers, all but the last field (the name).
	total, ints := 0, 0
	for x := range strings.FieldsSeq(t[end+1:]) {
		if ints == total && isInt(x) {
			ints++
		}
		total++
	}
	return headerlessColumns[max(0, min(ints, total-1))]
}

// taskRowShape: a raw line that may be a task-table row, after up to two
// bracketed prefixes (a dmesg timestamp, dmesg -T's date): rows carry no
// anchor word, and a paste may hold nothing else (go-debos/debos issue
// #216, kvcache-ai/ktransformers issue #637). Cheap for other lines: the
// first bracket that is not a pid ends the check.
func taskRowShape(b []byte) bool {
	for i := 0; i < 3 && len(b) > 2 && b[0] == '['; i++ {
		end := bytes.IndexByte(b, ']')
		if end < 2 {
			return false
		}
		if pidBracket(b[1:end]) {
			return headerlessRow(string(b))
		}
		b = bytes.TrimLeft(b[end+1:], " ")
	}
	return false
}

func pidBracket(b []byte) bool {
	digits := false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c != ' ':
			return false
		}
	}
	return digits
}

func isInt(s string) bool { return isDigits(strings.TrimPrefix(s, "-")) }

// addTaskRow parses "[  19335]     0 19335    80289    26152 ... python3"
// and keeps the max biggest rows by RSS. rejoin replaces the last row (the
// same row, completed by a wrapped continuation line).
func addTaskRow(ko *KernelOOM, cols []string, t string, max int, rejoin bool) {
	end := strings.IndexByte(t, ']')
	if end < 0 || len(cols) == 0 {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(t[1:end]))
	if err != nil {
		return
	}
	f := strings.Fields(t[end+1:])
	if len(f) < len(cols) {
		return
	}
	// The name is the last column and may contain spaces.
	f = append(f[:len(cols)-1], strings.Join(f[len(cols)-1:], " "))
	row := Task{PID: pid, Name: f[len(f)-1]}
	page := ko.PageSize
	for i, c := range cols[:len(cols)-1] {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return
		}
		setTaskCol(&row, c, n, page)
	}
	if rejoin && removeTask(ko, pid) {
		ko.TasksTotal--
	}
	ko.TasksTotal++
	ko.Tasks = append(ko.Tasks, row)
	sort.SliceStable(ko.Tasks, func(i, j int) bool { return ko.Tasks[i].RSSBytes > ko.Tasks[j].RSSBytes })
	if len(ko.Tasks) > max {
		ko.Tasks = ko.Tasks[:max]
	}
}

func removeTask(ko *KernelOOM, pid int) bool {
	for i := range ko.Tasks {
		if ko.Tasks[i].PID == pid {
			ko.Tasks = append(ko.Tasks[:i], ko.Tasks[i+1:]...)
			return true
		}
	}
	return false
}

func setTaskCol(r *Task, col string, n, page int64) {
	switch col {
	case "uid":
		r.UID = int(n)
	case "tgid":
		r.TGID = int(n)
	case "total_vm":
		r.TotalVMBytes = n * page
	case "rss":
		r.RSSBytes = n * page
	case "rss_anon":
		r.RSSAnonBytes = i64Ptr(n * page)
	case "rss_file":
		r.RSSFileBytes = i64Ptr(n * page)
	case "rss_shmem":
		r.RSSShmemBytes = i64Ptr(n * page)
	case "swapents":
		r.SwapBytes = n * page
	case "oom_score_adj":
		r.OOMScoreAdj = int(n)
	}
}

// parseMemInfoLine reads show_mem's summary into kv (page counts, or
// bytes for keys ending in "_bytes"). Values are set, not added, so that
// re-reading a line completed by a wrapped continuation is harmless.
//
//	active_anon:4183 inactive_anon:1983771 isolated_anon:0
//	 active_file:52 inactive_file:0 ... free:25407 free_pcp:0 free_cma:0
//	Node 0 hugepages_total=0 hugepages_free=0 hugepages_surp=0 hugepages_size=2048kB
//	Free swap  = 0kB
//	Total swap = 0kB
//	4194173 pages RAM
func parseMemInfoLine(kv map[string]int64, t string) {
	switch {
	case strings.HasPrefix(t, "Free swap"):
		setKB(kv, "swap_free_bytes", afterEq(t))
	case strings.HasPrefix(t, "Total swap"):
		setKB(kv, "swap_total_bytes", afterEq(t))
	case strings.HasSuffix(t, " pages RAM"):
		if n, err := strconv.ParseInt(strings.Fields(t)[0], 10, 64); err == nil {
			kv["pages_ram"] = n
		}
	case strings.HasPrefix(t, "Node ") && strings.Contains(t, "hugepages_total="):
		parseHugePages(kv, t)
	case !strings.HasPrefix(t, "Node "):
		for f := range strings.FieldsSeq(t) { // no slice: noise lines come here too
			k, v, ok := strings.Cut(f, ":")
			if n, err := strconv.ParseInt(v, 10, 64); ok && err == nil {
				kv[k] = n
			}
		}
	}
}

// parseHugePages: "Node 0 hugepages_total=360 hugepages_free=360
// hugepages_surp=0 hugepages_size=1048576kB", one line per node and page
// size: keyed by both, so that the 2 MiB line does not replace the 1 GiB one.
func parseHugePages(kv map[string]int64, t string) {
	var total, size *int64
	for _, f := range strings.Fields(t) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "hugepages_total":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				total = &n
			}
		case "hugepages_size":
			size = kbPtr(v)
		}
	}
	if total != nil && size != nil {
		kv["hp_"+strings.Fields(t)[1]+"_"+strconv.FormatInt(*size, 10)] = *total * *size
	}
}

func afterEq(t string) string {
	_, v, _ := strings.Cut(t, "=")
	return v
}

func setKB(kv map[string]int64, key, v string) {
	if p := kbPtr(v); p != nil {
		kv[key] = *p
	}
}

// memInfoFrom turns the collected values into MemInfo; nil if empty.
func memInfoFrom(kv map[string]int64, page int64) *MemInfo {
	if len(kv) == 0 {
		return nil
	}
	mi := &MemInfo{}
	// A sum needs all its terms: one cut off by a wrapped or truncated
	// line is absent, not understated.
	pages := func(keys ...string) *int64 {
		var sum int64
		for _, k := range keys {
			v, ok := kv[k]
			if !ok {
				return nil
			}
			sum += v * page
		}
		return i64Ptr(sum)
	}
	mi.TotalRAMBytes = pages("pages_ram")
	mi.FreeBytes = pages("free")
	mi.AnonBytes = pages("active_anon", "inactive_anon")
	mi.FileBytes = pages("active_file", "inactive_file")
	mi.ShmemBytes = pages("shmem")
	mi.SlabBytes = pages("slab_reclaimable", "slab_unreclaimable")
	if v, ok := kv["swap_total_bytes"]; ok {
		mi.SwapTotalBytes = i64Ptr(v)
	}
	if v, ok := kv["swap_free_bytes"]; ok {
		mi.SwapFreeBytes = i64Ptr(v)
	}
	var huge int64
	for k, v := range kv {
		if strings.HasPrefix(k, "hp_") {
			huge += v
		}
	}
	if huge > 0 {
		mi.HugePagesBytes = i64Ptr(huge)
	}
	return mi
}
