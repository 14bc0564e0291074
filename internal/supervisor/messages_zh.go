package supervisor

// messagesZH: the Chinese of every id in messagesEN, same arguments.
// Series names (rss, pss, cgroup, gpu0) stay as the JSON and the charts
// spell them.
var messagesZH = map[string]string{
	"status.prefix":       "torchmem：",
	"status.sep":          " | ",
	"status.cgroup":       "cgroup %[1]s",
	"status.cgroup_limit": "cgroup %[1]s/%[2]s（剩余 %[3]s）",
	"status.rss":          "rss %[1]s",
	"status.pss":          "pss %[1]s",
	"status.host":         "主机可用 %[1]s",
	"status.gpu":          "gpu%[1]d %[2]s",
	"status.alloc":        "已分配/预留 %[1]s/%[2]s",
	"status.step":         "第 %[1]d 步",
	"status.oom_in":       "%[1]s约 %[2]s 后 OOM（+%[3]s/s）",

	"pm.header":      "torchmem：运行 %[1]s %[2]s%[3]s，用时 %[4]s 秒",
	"pm.exit_status": "（退出码 %[1]d）",
	"pm.cgroup":      "  cgroup %[1]s",
	"pm.limit":       "，限制 %[1]s",
	"pm.events":      "，事件：%[1]s",
	"pm.peaks":       "  峰值：%[1]s",
	"pm.peak_sparse": "（每 %[1]s 读取一次）",
	"pm.steps":       "  优化器步数：%[1]d，挂载 hook 的进程：%[2]d%[3]s",
	"pm.step_alloc":  "第 %[2]d 步已分配 (allocated) 峰值 %[1]s",
	"pm.step_rsv":    "第 %[2]d 步已预留 (reserved) %[1]s",
	"pm.step_median": "每步中位耗时 %[1]s ms",
	"pm.step_list":   "；%[1]s",
	"pm.sep":         "，",
	"pm.orphans":     "  杀死了作业遗留的 %[1]d 个进程（孤儿 worker）",
	"pm.kernel":      "  内核：%[1]s",
	"pm.exception":   "  异常：%[1]s",
	"pm.evidence":    "  证据：%[1]s",
	"pm.snapshot":    "  OOM 时的显存快照：%[1]s（torchmem snapshot summary FILE）",
	"pm.no_snapshot": "  OOM 时没有显存快照：%[1]s",
}
