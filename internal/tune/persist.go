package tune

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Files torchmem writes; revert restores whatever was there before.
const (
	SysctlFile    = "/etc/sysctl.d/90-torchmem.conf"
	LimitsFile    = "/etc/security/limits.d/90-torchmem.conf"
	THPUnit       = "/etc/systemd/system/torchmem-thp.service"
	THPUnitWants  = "/etc/systemd/system/sysinit.target.wants/torchmem-thp.service"
	tunedDir      = "/etc/tuned"
	tunedActive   = "/etc/tuned/active_profile"
	JournalDir    = "/var/lib/torchmem/tune"
	JournalFile   = JournalDir + "/journal.json"
	defaultTuned  = "throughput-performance"
	fileHeaderFmt = "# Written by `torchmem tune apply` (profile %s). `torchmem tune revert` restores what was here.\n"
)

// render fills in the files and commands that persist the planned changes.
func (p *Plan) render(o *Options) error {
	var sysctls, limits, thp []Change
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Action != ActSet {
			continue
		}
		switch c.Kind {
		case Sysctl:
			sysctls, c.Persist = append(sysctls, *c), SysctlFile
		case Limit:
			limits, c.Persist = append(limits, *c), LimitsFile
		case THP:
			thp = append(thp, *c)
		}
	}
	if len(sysctls) > 0 {
		p.Files = append(p.Files, File{Path: SysctlFile, Content: sysctlConf(p.Profile, sysctls)})
	}
	if len(limits) > 0 {
		p.Files = append(p.Files, File{Path: LimitsFile, Content: limitsConf(p.Profile, limits)})
	}
	if len(thp) == 0 {
		return nil
	}
	useTuned, err := chooseTuned(o)
	if err != nil {
		return err
	}
	if useTuned {
		p.renderTuned(o, thp, sysctls)
	} else {
		p.renderSystemd(thp)
	}
	return nil
}

func sysctlConf(profile string, cs []Change) string {
	var b strings.Builder
	fmt.Fprintf(&b, fileHeaderFmt, profile)
	for _, c := range cs {
		fmt.Fprintf(&b, "# %s (was %s)\n%s = %s\n", c.Reason, c.Current, c.Key, c.Target)
	}
	return b.String()
}

func limitsConf(profile string, cs []Change) string {
	var b strings.Builder
	fmt.Fprintf(&b, fileHeaderFmt, profile)
	b.WriteString("# Takes effect at the next login (pam_limits); services need Limit*= in their units.\n")
	for _, c := range cs {
		item := strings.TrimPrefix(c.Key, "limits.")
		fmt.Fprintf(&b, "# %s (was %s)\n*    soft %-8s %s\n", c.Reason, c.CurrentText(), item, c.Target)
		// Never lower a hard limit that is already above the target.
		if !atLeast(mustInt(c.Target))(c.Hard) {
			fmt.Fprintf(&b, "*    hard %-8s %s\n", item, c.Target)
		}
	}
	return b.String()
}

// chooseTuned: tuned where it is installed (RHEL, CentOS, Rocky), since
// tuned would otherwise reset THP (and its own sysctls) at every boot.
func chooseTuned(o *Options) (bool, error) {
	installed := exists(o.path(tunedDir)) && (exists(o.path("/usr/sbin/tuned-adm")) || exists(o.path("/usr/bin/tuned-adm")))
	switch o.Persist {
	case "auto":
		return installed, nil
	case "tuned":
		if !installed {
			return false, fmt.Errorf("--persist tuned: tuned is not installed under %s", o.Root)
		}
		return true, nil
	case "systemd":
		return false, nil
	}
	return false, fmt.Errorf("--persist %q: want auto, tuned or systemd", o.Persist)
}

// activeTuned returns tuned's active profile, "" when none is recorded.
func activeTuned(o *Options) string {
	b, err := os.ReadFile(o.path(tunedActive))
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return ""
}

func (p *Plan) renderTuned(o *Options, thp, sysctls []Change) {
	p.Persistence = "tuned"
	name := "torchmem-" + p.Profile
	base := defaultTuned
	if a := activeTuned(o); a != "" && !strings.HasPrefix(a, "torchmem-") {
		base = a
	}
	var b strings.Builder
	fmt.Fprintf(&b, fileHeaderFmt, p.Profile)
	fmt.Fprintf(&b, "[main]\nsummary=torchmem %s settings on top of %s\ninclude=%s\n\n", p.Profile, base, base)
	for _, c := range thp {
		if c.Key == "thp.enabled" {
			fmt.Fprintf(&b, "[vm]\ntransparent_hugepages=%s\n\n", c.Target)
		}
	}
	for _, c := range thp {
		if c.Key == "thp.defrag" {
			fmt.Fprintf(&b, "[sysfs]\n/sys/kernel/mm/transparent_hugepage/defrag=%s\n\n", c.Target)
		}
	}
	if len(sysctls) > 0 {
		// tuned applies its profile's sysctls after sysctl.d: repeat ours so
		// the included profile (virtual-guest sets swappiness 30) cannot win.
		b.WriteString("[sysctl]\n")
		for _, c := range sysctls {
			fmt.Fprintf(&b, "%s=%s\n", c.Key, c.Target)
		}
	}
	path := tunedDir + "/" + name + "/tuned.conf"
	p.Files = append(p.Files, File{Path: path, Content: b.String()})
	p.Commands = append(p.Commands, []string{"tuned-adm", "profile", name})
	for i := range p.Changes {
		if p.Changes[i].Kind == THP && p.Changes[i].Action == ActSet {
			p.Changes[i].Persist = path
		}
	}
}

func (p *Plan) renderSystemd(thp []Change) {
	p.Persistence = "systemd"
	var cmds []string
	for _, c := range thp {
		cmds = append(cmds, fmt.Sprintf("echo %s > /sys/kernel/mm/transparent_hugepage/%s", c.Target, strings.TrimPrefix(c.Key, "thp.")))
	}
	unit := fmt.Sprintf(fileHeaderFmt, p.Profile) + `[Unit]
Description=torchmem: transparent hugepage settings for PyTorch (profile ` + p.Profile + `)
DefaultDependencies=no
After=sysinit.target local-fs.target
ConditionPathExists=/sys/kernel/mm/transparent_hugepage/enabled

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c '` + strings.Join(cmds, " && ") + `'

[Install]
WantedBy=sysinit.target
`
	p.Files = append(p.Files, File{Path: THPUnit, Content: unit},
		File{Path: THPUnitWants, Link: "../torchmem-thp.service"})
	p.Commands = append(p.Commands, []string{"systemctl", "daemon-reload"})
	for i := range p.Changes {
		if p.Changes[i].Kind == THP && p.Changes[i].Action == ActSet {
			p.Changes[i].Persist = THPUnit
		}
	}
}

// mustInt parses a limit target; "unlimited" is the largest.
func mustInt(s string) int64 {
	if s == "unlimited" {
		return 1<<63 - 1
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
