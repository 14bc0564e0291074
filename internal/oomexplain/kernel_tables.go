package oomexplain

import (
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
	if rejoin && len(ko.Tasks) > 0 && ko.TasksTotal > 0 {
		ko.TasksTotal--
		removeTask(ko, pid)
	}
	ko.TasksTotal++
	ko.Tasks = append(ko.Tasks, row)
	sort.SliceStable(ko.Tasks, func(i, j int) bool { return ko.Tasks[i].RSSBytes > ko.Tasks[j].RSSBytes })
	if len(ko.Tasks) > max {
		ko.Tasks = ko.Tasks[:max]
	}
}

func removeTask(ko *KernelOOM, pid int) {
	for i := range ko.Tasks {
		if ko.Tasks[i].PID == pid {
			ko.Tasks = append(ko.Tasks[:i], ko.Tasks[i+1:]...)
			return
		}
	}
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

// parseMemInfoLine reads show_mem's summary, in pages unless marked kB:
//
//	active_anon:4183 inactive_anon:1983771 isolated_anon:0
//	 active_file:52 inactive_file:0 ... free:25407 free_pcp:0 free_cma:0
//	Node 0 hugepages_total=0 hugepages_free=0 hugepages_surp=0 hugepages_size=2048kB
//	Free swap  = 0kB
//	Total swap = 0kB
//	4194173 pages RAM
func parseMemInfoLine(ko *KernelOOM, t string, page int64) {
	mi := ko.MemInfo
	switch {
	case strings.HasPrefix(t, "Free swap"):
		mi.SwapFreeBytes = kbPtr(afterEq(t))
	case strings.HasPrefix(t, "Total swap"):
		mi.SwapTotalBytes = kbPtr(afterEq(t))
	case strings.HasSuffix(t, " pages RAM"):
		if n, err := strconv.ParseInt(strings.Fields(t)[0], 10, 64); err == nil {
			mi.TotalRAMBytes = i64Ptr(n * page)
		}
	case strings.HasPrefix(t, "Node ") && strings.Contains(t, "hugepages_total="):
		addHugepages(mi, t)
	case !strings.HasPrefix(t, "Node "):
		for _, f := range strings.Fields(t) {
			k, v, ok := strings.Cut(f, ":")
			if n, err := strconv.ParseInt(v, 10, 64); ok && err == nil {
				addMemInfoPages(mi, k, n*page)
			}
		}
	}
}

func afterEq(t string) string {
	_, v, _ := strings.Cut(t, "=")
	return v
}

func addMemInfoPages(mi *MemInfo, k string, b int64) {
	add := func(p **int64) {
		if *p == nil {
			*p = i64Ptr(0)
		}
		**p += b
	}
	switch k {
	case "free":
		add(&mi.FreeBytes)
	case "active_anon", "inactive_anon":
		add(&mi.AnonBytes)
	case "active_file", "inactive_file":
		add(&mi.FileBytes)
	case "shmem":
		add(&mi.ShmemBytes)
	case "slab_reclaimable", "slab_unreclaimable":
		add(&mi.SlabBytes)
	}
}

func addHugepages(mi *MemInfo, t string) {
	var total, size int64
	for _, f := range strings.Fields(t) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "hugepages_total":
			total, _ = strconv.ParseInt(v, 10, 64)
		case "hugepages_size":
			if p := kbPtr(v); p != nil {
				size = *p
			}
		}
	}
	if total > 0 {
		if mi.HugePagesBytes == nil {
			mi.HugePagesBytes = i64Ptr(0)
		}
		*mi.HugePagesBytes += total * size
	}
}
