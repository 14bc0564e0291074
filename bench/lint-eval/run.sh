#!/usr/bin/env bash
# Real-world evaluation of `torchmem lint` (issue 21).
#
#   bash bench/lint-eval/fetch.sh      # once: copy the pinned trees into the cache
#   bash bench/lint-eval/run.sh        # lint them, time it, score against labels.jsonl
#
# Environment: LINT_EVAL_CACHE (default $HOME/.cache/torchmem-lint-eval),
# TORCHMEM (a built binary; default: built from this checkout into a temp dir),
# LINT_EVAL_TORCH (the --torch-version the fixes and version-dependent rules
# assume, default 2.4, so the result does not depend on the torch installed
# here), LINT_EVAL_PYTHON (the --python that parses the files, default
# python3), LINT_EVAL_STRICT=1 (exit 1 when a finding is unlabelled or a target
# is missed).
#
# Without the cache (CI) the corpus part is skipped with a notice and exits 0;
# the recall set (bench/lint-eval/recall/, in the repository) still runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${LINT_EVAL_CACHE:-$HOME/.cache/torchmem-lint-eval}
tv=${LINT_EVAL_TORCH:-2.4}
tm=${TORCHMEM:-}
py=${LINT_EVAL_PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$tm" ]; then
	(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/torchmem" ./cmd/torchmem)
	tm=$tmp/torchmem
fi

names=()
if [ -d "$cache" ]; then
	while read -r name _; do
		[ -f "$cache/$name/.torchmem-commit" ] && names+=("$name")
	done < <(grep -v '^[[:space:]]*\(#\|$\)' "$here/repos.txt")
fi

if [ ${#names[@]} -eq 0 ]; then
	echo "notice: lint-eval corpus not cached at $cache: real-world evaluation skipped (run bench/lint-eval/fetch.sh)"
	echo '[]' > "$tmp/corpus.json"
	lines=0 secs=0
else
	lines=$(cd "$cache" && find "${names[@]}" -name '*.py' -print0 | xargs -0 cat | wc -l)
	files=$(cd "$cache" && find "${names[@]}" -name '*.py' | wc -l)
	times > "$tmp/t0"
	start=$(date +%s.%N)
	rc=0
	(cd "$cache" && "$tm" lint --json --no-host --python "$py" --torch-version "$tv" "${names[@]}") > "$tmp/corpus.json" 2> "$tmp/corpus.err" || rc=$?
	end=$(date +%s.%N)
	times > "$tmp/t1"
	# children's user+sys CPU of this lint run (bash `times`, second line)
	cpu=$(tail -q -n1 "$tmp/t0" "$tmp/t1" | tr -d 's' | awk '{ split($1, a, "m"); split($2, b, "m"); t[NR] = a[1]*60 + a[2] + b[1]*60 + b[2] } END { printf "%.2f", t[2] - t[1] }')
	if [ "$rc" -gt 1 ]; then cat "$tmp/corpus.err" >&2; echo "run.sh: torchmem lint exited $rc" >&2; exit 2; fi
	secs=$(echo "$end - $start" | bc)
	echo "corpus: ${#names[@]} repositories, $files files, $lines lines of Python, linted in ${secs} s wall, ${cpu} s CPU (torchmem lint --json --no-host --python $py --torch-version $tv)"
fi

# Recall set: each file names its expected rule in a "# expect: TMnnn" header.
rc=0
(cd "$here/recall" && "$tm" lint --json --no-host --python "$py" --torch-version "$tv" .) > "$tmp/recall.json" 2> "$tmp/recall.err" || rc=$?
if [ "$rc" -gt 1 ]; then cat "$tmp/recall.err" >&2; echo "run.sh: torchmem lint (recall) exited $rc" >&2; exit 2; fi

python3 - "$tmp/corpus.json" "$here/labels.jsonl" "$tmp/recall.json" "$here/recall" "${LINT_EVAL_STRICT:-0}" ${#names[@]} "${names[@]}" <<'PY'
import json, os, re, sys, collections
corpus, labels_path, recall_json, recall_dir, strict, n = sys.argv[1:7]
names = set(sys.argv[7:7 + int(n)])
fail = False
if names:
    labels = {}
    for i, ln in enumerate(open(labels_path), 1):
        ln = ln.strip()
        if not ln:
            continue
        d = json.loads(ln)
        assert d["label"] in ("tp", "fp"), f"labels.jsonl:{i}: label must be tp or fp"
        assert d.get("reason"), f"labels.jsonl:{i}: a reason is required"
        labels[(d["repo"], d["path"], d["line"], d["rule"])] = d
    found = json.load(open(corpus))
    per = collections.defaultdict(lambda: [0, 0])
    unl, seen = [], set()
    for f in found:
        repo, _, path = f["file"].partition("/")
        k = (repo, path, f["line"], f["rule"])
        seen.add(k)
        d = labels.get(k)
        if d is None:
            unl.append(f)
            continue
        per[f["rule"]][0 if d["label"] == "tp" else 1] += 1
    print(f"findings: {len(found)} ({len(found) - len(unl)} labelled)")
    print(f"{'rule':6} {'tp':>4} {'fp':>4} {'precision':>9}")
    T = F = 0
    for r in sorted(per):
        tp, fp = per[r]
        T += tp; F += fp
        print(f"{r:6} {tp:4} {fp:4} {100 * tp / (tp + fp):8.1f}%")
    prec = 100 * T / (T + F) if T + F else 100.0
    print(f"{'all':6} {T:4} {F:4} {prec:8.1f}%   (target >= 95%)")
    fps = [(k, d) for k, d in labels.items() if k in seen and d["label"] == "fp"]
    if fps:
        print("false positives:")
        for k, d in sorted(fps):
            print(f"  {k[3]} {k[0]}/{k[1]}:{k[2]}: {d['reason']}")
    if unl:
        print(f"UNLABELLED findings ({len(unl)}): add them to labels.jsonl")
        for f in unl:
            print(f"  {f['rule']} {f['file']}:{f['line']}:{f['col']}: {f['message']}")
        fail = True
    stale = [k for k in labels if k[0] in names and k not in seen]
    if stale:
        print(f"labels with no finding now ({len(stale)}; a rule stopped reporting them):")
        for k in sorted(stale):
            print(f"  {k[3]} {k[0]}/{k[1]}:{k[2]} ({labels[k]['label']})")
    fail = fail or prec < 95
found = collections.defaultdict(set)
for f in json.load(open(recall_json)):
    found[os.path.basename(f["file"])].add(f["rule"])
cases = sorted(p for p in os.listdir(recall_dir) if p.endswith(".py"))
miss = []
for p in cases:
    m = re.search(r"^# expect: (TM\d{3})", open(os.path.join(recall_dir, p)).read(), re.M)
    if not m:
        print(f"recall/{p}: no '# expect: TMnnn' header"); fail = True; continue
    if m.group(1) not in found[p]:
        miss.append((p, m.group(1), sorted(found[p])))
c = len(cases) - len(miss)
pct = 100 * c / len(cases) if cases else 0
print(f"recall: {c}/{len(cases)} patterns caught = {pct:.1f}%   (target >= 90%)")
for p, r, got in miss:
    print(f"  missed {r} recall/{p} (reported: {', '.join(got) or 'nothing'})")
fail = fail or pct < 90
if fail and strict == "1":
    sys.exit(1)
PY
