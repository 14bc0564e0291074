package cli

// cliMessagesZH is the Chinese of every cliCatalog id, with the same
// arguments. Column headers of tables keep their English name in brackets
// where a script or a user may look for it.
var cliMessagesZH = map[string]string{
	"tune.plan.header":       "torchmem tune plan：配置 (profile) %[1]s",
	"tune.plan.persisted_by": "（THP 由 %[1]s 持久化）",
	"tune.plan.columns":      "设置\t当前值\t目标值\t操作\t持久化位置 / 说明",
	"tune.action.set":        "修改",
	"tune.action.keep":       "保持",
	"tune.action.skip":       "跳过",
	"tune.action.advice":     "建议",
	"tune.plan.shm_advice":   "\n建议（%[1]s）：/dev/shm 偏小：%[2]s。torchmem 从不重新挂载它。主机：在 /etc/fstab 中加入 'tmpfs /dev/shm tmpfs defaults,size=50%% 0 0'，并在没有作业运行时执行 mount -o remount /dev/shm；容器：--shm-size=16g 或 --ipc=host。\n",
	"tune.plan.link":         "\n链接 %[1]s -> %[2]s\n",
	"tune.plan.write":        "\n写入 %[1]s：\n",
	"tune.plan.run":          "\n执行（仅在本机）：%[1]s\n",
	"tune.status.none":       "torchmem tune 没有应用过任何设置",
	"tune.status.applied":    "已应用",
	"tune.status.incomplete": "未完成（一次应用被中断：请运行 torchmem tune revert）",
	"tune.status.header":     "配置 %[1]s %[2]s，时间 %[3]s（日志 %[4]s）\n",
	"tune.status.live":       "运行时值\t目标值\t当前值\t状态",
	"tune.status.files":      "文件\t状态",
	"tune.status.drifted":    "已偏离：%[1]s",
	"tune.status.ok":         "正常",
	"tune.apply.applied":     "已应用",
	"tune.apply.dry_run":     "演练 (dry run)：将会应用",
	"tune.apply.done":        "\n%[1]s配置 %[2]s（%[3]d 个运行时值，%[4]d 个文件）；日志 %[5]s；撤销：torchmem tune revert\n",
	"tune.apply.confirm":     "\n应用这些修改？[y/N] ",
	"tune.apply.nothing":     "未做任何修改",
}
