package webassets

import (
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// seriesCatalog holds the series and marker names; technical names users
// search for (memory.current, smaps_rollup, MemAvailable, NVML) stay as
// the kernel and drivers spell them.
var seriesCatalog = i18n.NewCatalog("webassets", map[language.Tag]map[string]string{
	i18n.EN: {
		"series.cgroup_usage":         "cgroup usage (memory.current)",
		"series.pss_total":            "PSS (smaps_rollup)",
		"series.rss_total":            "RSS (status)",
		"series.swap_total":           "swap",
		"series.host_available":       "host available (MemAvailable)",
		"series.gpu_used":             "GPU %[1]s used (NVML, whole device)",
		"series.gpu_job_used":         "GPU %[1]s used by the job",
		"series.alloc_allocated":      "allocator allocated",
		"series.alloc_reserved":       "allocator reserved",
		"series.alloc_peak_allocated": "allocator peak allocated",
		"series.alloc_peak_reserved":  "allocator peak reserved",
		"series.gpu_pid":              "GPU memory of process %[1]s (NVML)",
		"series.step":                 "optimizer step",
		"series.step_peak_allocated":  "per-step peak allocated",
		"series.step_peak_reserved":   "per-step peak reserved",
		"series.step_seconds":         "step time",
		"event.limit":                 "limit (memory.max)",
		"event.oom_kill":              "OOM kill",
		"event.cgroup_oom":            "cgroup OOM",
		"event.cuda_oom":              "CUDA OOM",
		"event.exception":             "exception",
		"event.warn":                  "warning",
		"event.cgroup_threshold":      "cgroup threshold",
		"event.stop":                  "stopped by policy",
		"event.snapshot":              "snapshot",
		"event.tensor_cycle":          "tensor reference cycle",
		"event.cleanup":               "cleanup",
		"event.signal":                "signal",
		"event.exit":                  "exit",
	},
	i18n.ZH: {
		"series.cgroup_usage":         "cgroup 用量 (memory.current)",
		"series.pss_total":            "PSS（按比例分摊，smaps_rollup）",
		"series.rss_total":            "RSS（常驻内存，status）",
		"series.swap_total":           "交换区 (swap)",
		"series.host_available":       "主机可用内存 (MemAvailable)",
		"series.gpu_used":             "GPU %[1]s 已用（NVML，整卡）",
		"series.gpu_job_used":         "GPU %[1]s 任务占用",
		"series.alloc_allocated":      "分配器已分配 (allocated)",
		"series.alloc_reserved":       "分配器已保留 (reserved)",
		"series.alloc_peak_allocated": "分配器峰值已分配",
		"series.alloc_peak_reserved":  "分配器峰值已保留",
		"series.gpu_pid":              "进程 %[1]s 的 GPU 内存 (NVML)",
		"series.step":                 "优化器步数",
		"series.step_peak_allocated":  "每步峰值已分配",
		"series.step_peak_reserved":   "每步峰值已保留",
		"series.step_seconds":         "每步耗时",
		"event.limit":                 "上限 (memory.max)",
		"event.oom_kill":              "OOM 终止",
		"event.cgroup_oom":            "cgroup OOM",
		"event.cuda_oom":              "CUDA OOM",
		"event.exception":             "异常",
		"event.warn":                  "警告",
		"event.cgroup_threshold":      "cgroup 阈值",
		"event.stop":                  "策略停止",
		"event.snapshot":              "快照",
		"event.tensor_cycle":          "张量引用环",
		"event.cleanup":               "清理",
		"event.signal":                "信号",
		"event.exit":                  "退出",
	},
})

// hasMessage reports whether the catalog has id in English.
func hasMessage(id string) bool {
	_, ok := seriesIDs[id]
	return ok
}

var seriesIDs = func() map[string]bool {
	m := map[string]bool{}
	for _, id := range seriesCatalog.IDs() {
		m[id] = true
	}
	return m
}()
