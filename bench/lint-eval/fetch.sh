#!/usr/bin/env bash
# Copies the pinned trees of bench/lint-eval/repos.txt into a cache outside the
# repository: $LINT_EVAL_CACHE, default $HOME/.cache/torchmem-lint-eval/<NAME>/.
#
#   bash bench/lint-eval/fetch.sh                 # clone from github.com
#   LINT_EVAL_MIRRORS=/path bash bench/lint-eval/fetch.sh
#       # read local git mirrors first: $LINT_EVAL_MIRRORS/<owner>+<repo>/repo
#       # (a bare git dir holding the pinned commit); github.com otherwise
#   LINT_EVAL_URLS=list.txt ...                   # "OWNER/REPO URL" lines override the URL
#
# Only *.py files and torch pin files are copied (no data, no LFS); a
# repository already in the cache at its pinned commit is skipped. Nothing is
# written inside the torchmem checkout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${LINT_EVAL_CACHE:-$HOME/.cache/torchmem-lint-eval}
mirrors=${LINT_EVAL_MIRRORS:-}
urls=${LINT_EVAL_URLS:-}
case "$cache" in "$(cd "$here/../.." && pwd)"/*) echo "fetch.sh: the cache must be outside the repository" >&2; exit 2;; esac
mkdir -p "$cache"
keep='(\.py|/requirements[^/]*\.txt|^requirements[^/]*\.txt|pyproject\.toml|setup\.py|setup\.cfg|environment\.yml)$'

grep -v '^[[:space:]]*\(#\|$\)' "$here/repos.txt" | while read -r name repo commit paths; do
	dest="$cache/$name"
	if [ -f "$dest/.torchmem-commit" ] && [ "$(cat "$dest/.torchmem-commit")" = "$commit" ]; then
		echo "fetch.sh: $name: cached at ${commit:0:12}"
		continue
	fi
	gitdir=""
	if [ -n "$mirrors" ] && [ -d "$mirrors/${repo/\//+}/repo" ] &&
		git --git-dir="$mirrors/${repo/\//+}/repo" cat-file -e "$commit^{commit}" 2>/dev/null; then
		gitdir="$mirrors/${repo/\//+}/repo"
	else
		url="https://github.com/$repo.git"
		if [ -n "$urls" ]; then
			u=$(awk -v r="$repo" '$1 == r { print $2 }' "$urls")
			[ -n "$u" ] && url=$u
		fi
		gitdir="$cache/.git-$name"
		rm -rf "$gitdir"
		git init -q --bare "$gitdir"
		git --git-dir="$gitdir" fetch -q --depth 1 --filter=blob:limit=4m "$url" "$commit"
	fi
	inc=() exc=()
	for p in $paths; do
		case "$p" in '!'*) exc+=("${p#!}");; .) inc+=();; *) inc+=("$p");; esac
	done
	rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
	git --git-dir="$gitdir" ls-tree -r --name-only "$commit" -- "${inc[@]}" |
		grep -E "$keep" |
		{ if [ ${#exc[@]} -gt 0 ]; then grep -v -E "^($(IFS='|'; echo "${exc[*]}"))/"; else cat; fi; } |
		while IFS= read -r f; do
			mkdir -p "$dest.tmp/$(dirname "$f")"
			git --git-dir="$gitdir" cat-file blob "$commit:$f" > "$dest.tmp/$f"
		done
	echo "$commit" > "$dest.tmp/.torchmem-commit"
	rm -rf "$dest" && mv "$dest.tmp" "$dest"
	[ "$gitdir" = "$cache/.git-$name" ] && rm -rf "$gitdir"
	echo "fetch.sh: $name: $(find "$dest" -name '*.py' | wc -l) Python files at ${commit:0:12}"
done
