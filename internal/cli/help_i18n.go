package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// The help of every command in the reader's language. The English is
// what each command file declares (Short, Long, flag usages): the help
// catalog is built from the command tree itself, so there is one English
// text, and helpZH (help_zh.go) holds its translation by id:
//
//	cmd.<path>.short, cmd.<path>.long   (path: "tune.plan"; "root" for torchmem)
//	flag.<path>.<name>
//
// Man pages and completions (gen-docs) stay English; help is localized
// only when printed (localizeHelp, from the root's help function).

// helpID spells a command's path as an id part.
func helpID(c *cobra.Command) string {
	p := strings.TrimPrefix(c.CommandPath(), c.Root().Name())
	p = strings.ReplaceAll(strings.TrimSpace(p), " ", ".")
	if p == "" {
		return "root"
	}
	return p
}

// helpVisible: hidden commands (torchmem's internal re-executions) and
// cobra's own help command have no translated help.
func helpVisible(c *cobra.Command) bool { return !c.Hidden }

// walkHelp calls fn for every visible command under root, root included.
func walkHelp(root *cobra.Command, fn func(c *cobra.Command)) {
	if !helpVisible(root) {
		return
	}
	fn(root)
	for _, s := range root.Commands() {
		walkHelp(s, fn)
	}
}

// helpFlags calls fn for each flag declared on c itself (not inherited),
// hidden ones and cobra's automatic -h/--help excepted.
func helpFlags(c *cobra.Command, fn func(f *pflag.Flag)) {
	c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			fn(f)
		}
	})
	c.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			fn(f)
		}
	})
}

// helpEnglish harvests the English help of the tree, by id, as catalog
// texts (a literal % doubled).
func helpEnglish(root *cobra.Command) map[string]string {
	esc := strings.NewReplacer("%", "%%", "${", helpDollar)
	out := map[string]string{}
	walkHelp(root, func(c *cobra.Command) {
		id := helpID(c)
		if c.Short != "" {
			out["cmd."+id+".short"] = esc.Replace(c.Short)
		}
		if c.Long != "" {
			out["cmd."+id+".long"] = esc.Replace(c.Long)
		}
		helpFlags(c, func(f *pflag.Flag) {
			if f.Usage != "" {
				out["flag."+id+"."+f.Name] = esc.Replace(f.Usage)
			}
		})
	})
	for id, text := range helpFrameEN {
		out[id] = text
	}
	return out
}

// helpCatalog is the help of the tree under root in both languages.
func helpCatalog(root *cobra.Command) *i18n.Catalog {
	zh := make(map[string]string, len(helpZH))
	for id, text := range helpZH {
		zh[id] = strings.ReplaceAll(text, "${", helpDollar)
	}
	return i18n.NewCatalog("help", map[language.Tag]map[string]string{
		i18n.EN: helpEnglish(root),
		i18n.ZH: zh,
	})
}

// helpDollar stands for "${" inside the catalog, where x/text reads "${name}"
// as a variable (zsh's "${fpath[1]}" in cobra's completion help) and has
// no escape for it; rendered text gets "${" back.
const helpDollar = "$\x00{"

// localizeHelp rewrites the help of every command under root into lang
// (a no-op in English), and the usage template's headings.
func localizeHelp(root *cobra.Command, lang language.Tag) {
	if i18n.Base(lang) == i18n.EN {
		return
	}
	cat := helpCatalog(root)
	render := cat.T(lang)
	t := func(id string, args ...any) string {
		return strings.ReplaceAll(render(id, args...), helpDollar, "${")
	}
	has := func(id string) bool { _, ok := helpZH[id]; return ok }
	walkHelp(root, func(c *cobra.Command) {
		id := helpID(c)
		if has("cmd." + id + ".short") {
			c.Short = t("cmd." + id + ".short")
		}
		if has("cmd." + id + ".long") {
			c.Long = t("cmd." + id + ".long")
		}
		helpFlags(c, func(f *pflag.Flag) {
			if has("flag." + id + "." + f.Name) {
				f.Usage = t("flag." + id + "." + f.Name)
			}
		})
		c.InitDefaultHelpFlag()
		if f := c.Flags().Lookup("help"); f != nil {
			f.Usage = t("help.flag", c.Name())
		}
	})
	root.SetUsageTemplate(usageTemplateIn(t))
}

// usageTemplateIn is cobra's usage template with its headings in t's
// language (cobra v1.10's defaultUsageTemplate, headings replaced).
func usageTemplateIn(t func(string, ...any) string) string {
	return strings.NewReplacer(
		"Usage:", t("help.usage"),
		"Aliases:", t("help.aliases"),
		"Examples:", t("help.examples"),
		"Available Commands:", t("help.commands"),
		"Additional Commands:", t("help.more_commands"),
		"Global Flags:", t("help.global_flags"),
		"Flags:", t("help.flags"),
		"Additional help topics:", t("help.topics"),
		`Use "{{.CommandPath}} [command] --help" for more information about a command.`, t("help.more", "{{.CommandPath}}"),
	).Replace(cobraUsageTemplate)
}

// helpFrameEN is the English of the template's headings.
var helpFrameEN = map[string]string{
	"help.usage":         "Usage:",
	"help.aliases":       "Aliases:",
	"help.examples":      "Examples:",
	"help.commands":      "Available Commands:",
	"help.more_commands": "Additional Commands:",
	"help.flags":         "Flags:",
	"help.global_flags":  "Global Flags:",
	"help.topics":        "Additional help topics:",
	"help.more":          `Use "%[1]s [command] --help" for more information about a command.`,
	"help.flag":          "help for %[1]s",
}

// cobraUsageTemplate is cobra v1.10.2's default usage template.
const cobraUsageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}{{$cmds := .Commands}}{{if eq (len .Groups) 0}}

Available Commands:{{range $cmds}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{else}}{{range $group := .Groups}}

{{.Title}}{{range $cmds}}{{if (and (eq .GroupID $group.ID) (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if not .AllChildCommandsHaveGroup}}

Additional Commands:{{range $cmds}}{{if (and (eq .GroupID "") (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasHelpSubCommands}}

Additional help topics:{{range .Commands}}{{if .IsAdditionalHelpTopicCommand}}
  {{rpad .CommandPath .CommandPathPadding}} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// localizedHelp makes root's help (and every command's, which inherit it)
// speak env's language, decided when help is printed: --lang is parsed by
// then, and the locale was read into env before.
func localizedHelp(root *cobra.Command, env *Env) {
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		localizeHelp(root, env.lang())
		defaultHelp(c, args)
	})
}
