#!/usr/bin/env bash
# Runs every go test -fuzz target of the module for a short time each
# (FUZZTIME, default 10s), one after another, and fails if any fails.
# `go test` can fuzz only one target of one package per run, hence the loop.
#
#   scripts/fuzz.sh                  # every target, 10 s each (make fuzz)
#   FUZZTIME=30s scripts/fuzz.sh     # longer
#   scripts/fuzz.sh internal/procfs  # only the targets under a directory
#
# Each line of the summary gives the target and its wall time (the build
# included). Keep seeds small and inputs bounded: see MINIMIZE below.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
FUZZTIME=${FUZZTIME:-10s}
# Fuzzing wants every core; on a shared machine FUZZPARALLEL=1 keeps it to one.
PARALLEL=${FUZZPARALLEL:-0}
# The fuzzer minimises each input that finds new code before going on, in
# time quadratic in its length (every byte range is tried), up to 60 s by
# default: with ~1 KB snapshot pickles that took whole 30 s runs (7 execs,
# against 200k with 5 s). A failing input is still written, less minimised.
MINIMIZE=${FUZZMINIMIZETIME:-5s}
dirs=("${@:-internal}")

targets() {
	grep -rHnE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' "${dirs[@]}" |
		sed -E 's/^([^:]+):[0-9]+:func (Fuzz[A-Za-z0-9_]*)\(.*/\1 \2/' | sort -u
}

failed=()
summary=()
while read -r file name; do
	pkg=./$(dirname "$file")
	args=(-run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$MINIMIZE")
	[[ $PARALLEL != 0 ]] && args+=(-parallel "$PARALLEL")
	echo "== $pkg $name"
	start=$SECONDS
	if ! "$GO" test "${args[@]}" "$pkg"; then
		failed+=("$pkg $name")
	fi
	summary+=("$(printf '%4ds  %s %s' $((SECONDS - start)) "$pkg" "$name")")
done < <(targets)

printf '%s\n' "${summary[@]}"
if ((${#failed[@]} > 0)); then
	printf 'fuzz: FAILED %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: ${#summary[@]} targets passed (${FUZZTIME} each)"
