package cli

import (
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

// cliCatalog holds the sentences the commands themselves print (tune's
// plan and status, runs and show, the help of every command): the
// features' own sentences are in their packages' catalogs.
var cliCatalog = i18n.NewCatalog("cli", map[language.Tag]map[string]string{
	i18n.EN: cliMessagesEN,
	i18n.ZH: cliMessagesZH,
})

// tr is the printer of env's language, integers printed as fmt does.
func (env *Env) tr() func(id string, args ...any) string {
	t := cliCatalog.T(env.lang())
	return func(id string, args ...any) string { return t(id, i18n.Plain(args)...) }
}

// translate is env.tr()'s type, for printing helpers that take it.
type translate = func(id string, args ...any) string
