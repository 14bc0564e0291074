"""torchmem estimate --trace on Hugging Face transformers' own model code
(internal/tracerun/testdata/hf_train.py: GPT-2, Llama, BERT from_config,
AdamW) against the built-in estimate of the config.json transformers wrote;
one markdown row per case (bench/results/trace-hf.md).

Usage: hf_compare.py LABEL PYTHON CASE...
  LABEL   a name for the environment (the output folder under $OUT, default ./trace-hf-out)
  PYTHON  a python whose import path has torch and transformers
  CASE    model,batch,seq,precision,ckpt,attn[,cpu]   (cpu: also trace with --trace-device cpu)
$TORCHMEM: the torchmem binary (default: torchmem on PATH); $GPU: --gpu (default H100-80GB)."""
import json
import os
import subprocess
import sys
import time

TM = os.environ.get("TORCHMEM", "torchmem")
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "internal", "tracerun", "testdata",
                      "hf_train.py")
env_name, py = sys.argv[1], sys.argv[2]
GPU = os.environ.get("GPU", "H100-80GB")
out_dir = os.path.join(os.environ.get("OUT", "trace-hf-out"), env_name)
os.makedirs(out_dir, exist_ok=True)


def run_json(args, tag):
    t = time.time()
    p = subprocess.run(args, capture_output=True, text=True)
    with open(os.path.join(out_dir, tag + ".err"), "w") as f:
        f.write(" ".join(args) + "\n" + p.stderr)
    try:
        d = json.loads(p.stdout)
    except Exception:
        return None, time.time() - t
    with open(os.path.join(out_dir, tag + ".json"), "w") as f:
        f.write(p.stdout)
    return d, time.time() - t


def mib(b):
    return "%.2f" % (b / 2**20) if b is not None else "-"


for case in sys.argv[3:]:
    f = case.split(",")
    model, batch, seq, prec, ckpt, attn = f[:6]
    do_cpu = len(f) > 6 and f[6] == "cpu"
    tag = "-".join(f[:6])
    cfg = os.path.join(out_dir, tag + ".config.json")
    script = [py, SCRIPT, model, batch, seq, prec, ckpt, attn, cfg]
    meta, tm = run_json([TM, "estimate", "--trace", "--json", "--gpu", GPU, "--snapshot",
                         os.path.join(out_dir, tag + ".meta.pickle"), "--"] + script, tag + ".meta")
    cpu = None
    if do_cpu:
        cpu, tc = run_json([TM, "estimate", "--trace", "--trace-device", "cpu", "--json", "--gpu", GPU, "--"] + script,
                           tag + ".cpu")
    b_args = [TM, "estimate", "--config", cfg, "--batch", batch, "--seq", seq, "--precision", prec,
              "--attention", "eager" if attn == "eager" else "sdpa", "--gpu", GPU, "--json"]
    if ckpt == "1":
        b_args.append("--checkpointing")
    built, _ = run_json(b_args, tag + ".builtin")
    mc = "-"
    if do_cpu and meta and cpu:
        same = (meta["peak_allocated_bytes"] == cpu["peak_allocated_bytes"]
                and meta["live_bytes_peak"] == cpu["live_bytes_peak"]
                and meta["trace_events"] == cpu["trace_events"])
        mc = "same" if same else "DIFF meta %s/%s/%d cpu %s/%s/%d" % (
            mib(meta["peak_allocated_bytes"]), mib(meta["live_bytes_peak"]), meta["trace_events"],
            mib(cpu["peak_allocated_bytes"]), mib(cpu["live_bytes_peak"]), cpu["trace_events"])
    tp = meta["peak_allocated_bytes"] if meta else None
    bp = built["peak_allocated_bytes"] if built else None
    err = "%+.2f%%" % (100.0 * (tp - bp) / bp) if tp and bp else "-"
    notes = []
    if meta:
        notes.append("trace peak: " + meta["peak_phase"])
        if meta.get("end", {}).get("kind") != "steps":
            notes.append("END " + json.dumps(meta.get("end")))
    else:
        notes.append("trace failed, see %s.meta.err" % tag)
    if built:
        notes.append("built-in: " + built["peak_phase"])
    print("| %s b%s s%s | %s | %s | %s | %s | %s | %s | %s | %s | %.0fs |" % (
        model, batch, seq, prec + (" ckpt" if ckpt == "1" else ""), attn, env_name, mc, mib(tp), mib(bp), err,
        "; ".join(notes), tm), flush=True)
