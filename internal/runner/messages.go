package runner

import (
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// catalog holds the notices run prints about its own set-up (history,
// run directory, systemd scope, the --tui log) in Config.Lang.
var catalog = i18n.NewCatalog("runner", map[language.Tag]map[string]string{
	i18n.EN: {
		"history_off":   "torchmem: history off: %[1]s",
		"history_error": "torchmem: history store: %[1]s (the job is not affected)",
		"no_run_dir":    "torchmem: no run directory (in-process hook off): %[1]s",
		"output_in":     "torchmem: the job's output is in %[1]s",
		"scope":         "torchmem: no writable memory cgroup for uid %[1]d; re-running in a delegated systemd user scope (systemd-run --user --scope)",
		"scope_failed":  "torchmem: systemd-run: %[1]s; continuing without a scope",
		"notice":        "torchmem: %[1]s",
	},
	i18n.ZH: {
		"history_off":   "torchmem：历史记录已关闭：%[1]s",
		"history_error": "torchmem：历史库出错：%[1]s（不影响作业）",
		"no_run_dir":    "torchmem：无法创建运行目录（进程内 hook 已关闭）：%[1]s",
		"output_in":     "torchmem：作业的输出在 %[1]s",
		"scope":         "torchmem：uid %[1]d 没有可写的内存 cgroup；改在委派的 systemd 用户 scope 中重新运行（systemd-run --user --scope）",
		"scope_failed":  "torchmem：systemd-run：%[1]s；不使用 scope 继续运行",
		"notice":        "torchmem：%[1]s",
	},
})

// say renders message id in lang (English when unset), integers as fmt
// prints them.
func say(lang language.Tag, id string, args ...any) string {
	if lang == language.Und {
		lang = i18n.EN
	}
	return catalog.Sprintf(lang, id, i18n.Plain(args)...)
}
