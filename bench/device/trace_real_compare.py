#!/usr/bin/env python3
"""Compare `torchmem estimate --trace --json` (the meta-tensor prediction)
with `torchmem estimate --trace --real --json` (the same script measured on
the GPU) for every NAME.fake.json / NAME.real.json pair in DIR, against
issue 15's bounds: peak allocated within 3 %, peak reserved within 5 %.
nvidia-smi's figure is printed too (the prediction models the CUDA
context and libraries; no bound is set for it).

    python3 bench/device/trace_real_compare.py DIR

One line per script, then PASS or FAILED lines; exit 1 when any pair is
missing, unreadable or out of bounds. A missing report names the stderr
file to read (NAME.fake.err / NAME.real.err, written by trace_real.sh).
"""
import json
import os
import sys

BOUNDS = {"allocated": 0.03, "reserved": 0.05}
FIELDS = (("allocated", "peak_allocated_bytes"), ("reserved", "peak_reserved_bytes"), ("nvidia-smi", "process_bytes"))


def load(path):
    """The report in path, or (None, why)."""
    try:
        with open(path) as f:
            return json.load(f), ""
    except (OSError, ValueError) as err:
        why = str(err).split("\n")[0]
        errf = path[: -len(".json")] + ".err"
        if os.path.exists(errf):
            with open(errf) as f:
                lines = [l.strip() for l in f if l.strip()]
            if lines:
                why = lines[-1][:200]
        return None, why


def gib(n):
    return "%.3f GiB" % (n / float(1 << 30))


def compare(name, fake, real):
    """Table rows and verdict lines for one script."""
    rows, verdicts = [], []
    for label, key in FIELDS:
        f, r = fake.get(key, 0), real.get(key, 0)
        err = (f - r) / float(r) if r else float("inf")
        note = ""
        if label == "nvidia-smi" and not real.get("process_measured", False):
            note = " (real: not measured, modelled)"
        rows.append("  %-10s predicted %-12s measured %-12s error %+7.2f %%%s" % (label, gib(f), gib(r), 100 * err, note))
        bound = BOUNDS.get(label)
        if bound is not None:
            ok = abs(err) <= bound
            verdicts.append("%s %s %s: %+.2f %% (bound %.0f %%)" % ("PASS" if ok else "FAILED", name, label, 100 * err,
                                                                  100 * bound))
    return rows, verdicts


def main(d):
    names = sorted(set(n.rsplit(".", 2)[0] for n in os.listdir(d) if n.endswith((".fake.json", ".real.json"))))
    if not names:
        print("FAILED no NAME.fake.json / NAME.real.json reports in %s" % d)
        return 1
    failed = False
    verdicts = []
    for name in names:
        fake, why_f = load(os.path.join(d, name + ".fake.json"))
        real, why_r = load(os.path.join(d, name + ".real.json"))
        if fake is None or real is None:
            failed = True
            which = "fake" if fake is None else "real"
            verdicts.append("FAILED %s: no %s report: %s" % (name, which, why_f if fake is None else why_r))
            continue
        print("%s: %s steps predicted, %s run on %s (torch %s)" % (name, fake.get("trace_steps"), real.get("trace_steps"),
                                                                  real.get("measured_gpu", "?"), real.get("trace_torch", "?")))
        rows, v = compare(name, fake, real)
        print("\n".join(rows))
        verdicts.extend(v)
        failed = failed or any(x.startswith("FAILED") for x in v)
    print("\n".join(verdicts))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
