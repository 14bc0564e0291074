// Package python embeds the Python side of torchmem's in-process hook: a
// sitecustomize.py that chains to the next sitecustomize on sys.path, and
// the torchmem_hook package it loads when TORCHMEM_HOOK_SOCKET is set.
// hook.Install writes these files into a private directory per run.
package python

import (
	"embed"
	"io/fs"
)

//go:embed sitecustomize.py torchmem_hook/*.py
var files embed.FS

// Files is the package tree, rooted so that sitecustomize.py is at the top.
var Files fs.FS = files
