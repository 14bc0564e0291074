package tracerun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
)

// ddpParamBytes: the fp32 parameters of testdata/ddp_train.py's model
// (256->1024->256, LayerNorm(256), 256->10).
const ddpParamBytes = 4 * (256*1024 + 1024 + 1024*256 + 256 + 2*256 + 256*10 + 10)

// TestDistributedDDP: a DDP script under torchrun (`python -m
// torch.distributed.run --nproc_per_node 4`) is traced as its rank 0 worker
// in a world of 4 (torch >= 2.1: PyTorch's fake process group; the
// collectives answered in the dispatch mode). On meta and on real CPU
// tensors the peaks agree to the byte, in three layouts: DDP's reducer
// keeps a second copy of the gradients in its buckets, which
// gradient_as_bucket_view=True saves (the live peak is one gradient copy
// lower), fp16_compress_hook adds only temporaries, and
// ZeroRedundancyOptimizer keeps rank 0's share of AdamW's states. all_gather_object
// (pickled through the device, read back) works in both modes, or the
// script's own assert stops it.
func TestDistributedDDP(t *testing.T) {
	py := distPython(t, 2, 1)
	script := filepath.Join("testdata", "ddp_train.py")
	launch := func(device, mode string) *estimate.Trace {
		t.Helper()
		tr := trace(t, py, device, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "4", script, mode)
		d := tr.Dist
		if d == nil || d.World != 4 || d.Launcher != "torch.distributed.run 4" || d.Backend != "nccl" ||
			strings.Join(d.Wrappers, ",") != "DistributedDataParallel" {
			t.Fatalf("%s %s: distributed %+v, want rank 0 of 4 under torch.distributed.run, DDP, nccl", device, mode, d)
		}
		return tr
	}
	live, states := map[string]int64{}, map[string]int64{}
	for _, mode := range []string{"default", "bucket_view", "fp16_hook", "zero"} {
		t.Run(mode, func(t *testing.T) {
			meta, cpu := launch("meta", mode), launch("cpu", mode)
			samePeaks(t, meta, cpu)
			r := estimate.ReplayTrace(meta, estimate.TraceReplay{})
			live[mode] = r.LiveBytesPeak
			for _, a := range meta.Allocs {
				if a.Kind == "optstate" {
					states[mode] += a.Bytes
				}
			}
			if got := bucketBytes(meta); got != ddpParamBytes {
				t.Errorf("DDP's buckets made at construction: %d bytes, want the parameters' %d", got, ddpParamBytes)
			}
		})
	}
	if d := live["default"] - live["bucket_view"]; d != ddpParamBytes {
		t.Errorf("gradient_as_bucket_view saves %d bytes at the peak, want one gradient copy (%d)", d, ddpParamBytes)
	}
	if states["default"] != 2*ddpParamBytes || states["zero"] <= 0 || states["zero"] > states["default"]*3/4 {
		// ZeroRedundancyOptimizer gives rank 0 the first 256x1024 weight of
		// the greedy partition by size over 4 ranks: half the states
		t.Errorf("optimizer states %v: want AdamW's two per parameter, and rank 0's share under ZeRO", states)
	}
	if live["fp16_hook"] < live["default"] {
		t.Errorf("fp16_compress_hook peak %d below the default's %d", live["fp16_hook"], live["default"])
	}
}

// bucketBytes: what DDP's reducer made while it was constructed (counted
// as gradients, in the setup phase).
func bucketBytes(tr *estimate.Trace) int64 {
	var n int64
	for _, a := range tr.Allocs {
		if a.Phase == "setup" && a.Kind == "grad" {
			n += a.Bytes
		}
	}
	return n
}

// TestDistributedDDPModes: DDP's no_sync (gradient accumulation),
// find_unused_parameters and static_graph trace on meta as on CPU tensors
// (within the reducer's few int32 bookkeeping tensors, on the device for
// meta and on the host for cpu mode: under 2 KiB); SyncBatchNorm, whose
// kernels are CUDA's only (and which DDP refuses on CPU modules), traces
// on meta with its statistics made by shape.
func TestDistributedDDPModes(t *testing.T) {
	py := distPython(t, 2, 1)
	script := filepath.Join("testdata", "ddp_modes.py")
	argv := func(mode string) []string {
		return []string{"-m", "torch.distributed.run", "--nproc_per_node", "2", script, mode}
	}
	for _, mode := range []string{"no_sync", "find_unused", "static"} {
		t.Run(mode, func(t *testing.T) {
			meta := estimate.ReplayTrace(trace(t, py, "meta", argv(mode)...), estimate.TraceReplay{})
			cpu := estimate.ReplayTrace(trace(t, py, "cpu", argv(mode)...), estimate.TraceReplay{})
			if d := meta.LiveBytesPeak - cpu.LiveBytesPeak; d < 0 || d > 2048 {
				t.Errorf("live peak meta %d, cpu %d", meta.LiveBytesPeak, cpu.LiveBytesPeak)
			}
		})
	}
	t.Run("syncbn", func(t *testing.T) {
		tr := trace(t, py, "meta", argv("syncbn")...)
		stats := 0
		for _, a := range tr.Allocs {
			if strings.Contains(a.Op, "batch_norm_stats") || strings.Contains(a.Op, "batch_norm_backward_elemt") {
				stats++
			}
		}
		if stats == 0 {
			t.Error("no SyncBatchNorm kernel ran")
		}
		// cpu mode cannot run it (DDP refuses SyncBatchNorm on CPU
		// weights, its kernels are CUDA's): said so, with what to do
		var out strings.Builder
		cpu, err := Run(context.Background(), Options{Argv: append([]string{py}, argv("syncbn")...), Device: "cpu", Output: &out})
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if e := cpu.End; e == nil || e.Kind != "error" || !strings.Contains(e.Message, "trace without --trace-device cpu") {
			t.Errorf("cpu mode: end %+v, want SyncBatchNorm said to be traced on meta only", e)
		}
	})
}

// TestDistributedTensorParallel: PyTorch's tensor parallelism (a device
// mesh, parallelize_module: DTensor parameters) traced as rank 0 of 4 holds
// its shards: the MLP's 2,099,712 parameters split column- then row-wise
// leave 512x512 + 512 + 512x512 + 512 (the second bias replicated) =
// 525,312 on each rank, counted as weights; DTensor's own shape
// propagation (fake tensors) allocates nothing. Both layers split
// column-wise with their outputs gathered, 512x512 + 512 + 128x2048 + 128:
// the functional all-gather's wait returns the gathered tensor (its meta
// kernel made a copy of each). Meta and real CPU tensors make the same
// allocations. Attention with its heads split over the ranks runs the
// fused kernel on rank 0's heads.
func TestDistributedTensorParallel(t *testing.T) {
	py := distPython(t, 2, 4) // DTensor's public tensor parallelism
	for mode, shard := range map[string]int64{"": 512*512 + 512 + 512*512 + 512, "gather": 512*512 + 512 + 128*2048 + 128} {
		args := []string{"-m", "torch.distributed.run", "--nproc_per_node", "4", filepath.Join("testdata", "tensor_parallel.py")}
		if mode != "" {
			args = append(args, mode)
		}
		tr := trace(t, py, "meta", args...)
		agree(t, tr, trace(t, py, "cpu", args...))
		if r := estimate.ReplayTrace(tr, estimate.TraceReplay{}); r.Params != shard {
			t.Errorf("%q: parameters on rank 0: %d, want its shards' %d", mode, r.Params, shard)
		}
		if d := tr.Dist; d == nil || d.World != 4 {
			t.Errorf("%q: distributed %+v, want a world of 4", mode, d)
		}
	}
	// attention's heads split over the ranks: the fused kernel runs on
	// rank 0's 2 of the 8 heads, through DTensor's own rules (the math
	// backend a CPU build takes mixed the causal mask with DTensors)
	tr := trace(t, py, "meta", "-m", "torch.distributed.run", "--nproc_per_node", "4",
		filepath.Join("testdata", "tensor_parallel.py"), "attention")
	found := false
	for _, a := range tr.Allocs {
		found = found || strings.Contains(a.Op, "_scaled_dot_product_efficient_attention.default") && a.Shape == "4,2,64,64"
	}
	if !found {
		t.Errorf("attention: no fused attention output of rank 0's heads (4,2,64,64)")
	}
}

// TestDistributedSpawn: a script that starts its ranks with
// torch.multiprocessing.spawn over torch.cuda.device_count() GPUs runs
// rank 0's function in the traced process, in a world of --world-size (4),
// with DDP's buckets; its children would have run untraced.
func TestDistributedSpawn(t *testing.T) {
	py := distPython(t, 2, 1)
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{py, filepath.Join("testdata", "mp_spawn.py")}, World: 4, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if d := tr.Dist; tr.End == nil || tr.End.Kind != "steps" || d == nil || d.World != 4 || d.Launcher != "mp.spawn 4" {
		t.Fatalf("end %+v, distributed %+v: want 2 steps as rank 0 of 4 under mp.spawn\n%s", tr.End, d, out.String())
	}
	if got, want := bucketBytes(tr), int64(4*(256*256+256)); got != want {
		t.Errorf("DDP's buckets: %d bytes, want %d", got, want)
	}
}

// TestDistributedLaunchArgs: the deprecated torch.distributed.launch
// without --use-env gives the worker --local-rank=0, and a launcher's
// nodes x workers are the world (--nnodes 1:2 --nproc_per_node 3: 6);
// torch.cuda.device_count() answers the workers of a node. The script
// asserts all of it.
func TestDistributedLaunchArgs(t *testing.T) {
	py := distPython(t, 2, 1)
	tr := trace(t, py, "meta", "-m", "torch.distributed.launch", "--nnodes", "1:2", "--nproc_per_node", "3",
		filepath.Join("testdata", "launch_args.py"), "--width", "32")
	if d := tr.Dist; d == nil || d.World != 6 || d.Launcher != "torch.distributed.launch 6" {
		t.Errorf("distributed %+v, want rank 0 of 6 under torch.distributed.launch", d)
	}
}

// TestDistributedAccelerate: `accelerate launch --multi_gpu --num_processes
// 4` is traced as the rank 0 worker accelerate's own launcher makes
// (through torchrun's); DeepSpeed under it: TestDeepSpeedAccelerate.
// Skipped where the torch-2 python has no accelerate (CI: Debian has none).
func TestDistributedAccelerate(t *testing.T) {
	bin := accelerateCLI(t, distPython(t, 2, 1))
	script := filepath.Join("testdata", "ddp_train.py")
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{bin, "launch", "--multi_gpu", "--num_processes", "4", script}, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if d := tr.Dist; tr.End == nil || tr.End.Kind != "steps" || d == nil || d.World != 4 || d.Launcher != "accelerate 4" {
		t.Errorf("end %+v, distributed %+v: want 2 steps as rank 0 of 4 under accelerate\n%s", tr.End, d, out.String())
	}
	// FSDP2 under accelerate: launched through torchrun's launcher, the
	// optimizer switched to rank 0's shards (by data_ptr, which meta
	// tensors answer one per storage); FSDP1 (its default) too.
	fsdp := filepath.Join("testdata", "accelerate_fsdp.py")
	tr, err = Run(context.Background(), Options{Argv: []string{bin, "launch", "--use_fsdp", "--fsdp_version", "2", "--num_processes", "4", fsdp}, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if d := tr.Dist; tr.End == nil || tr.End.Kind != "steps" || d == nil || d.World != 4 || strings.Join(d.Wrappers, ",") != "fully_shard" {
		t.Errorf("FSDP2: end %+v, distributed %+v: want 2 steps as rank 0 of 4 under fully_shard", tr.End, d)
	}
	if states, want := firstStepStates(tr), int64(2*4*fsdp2ShardElems); states != want {
		t.Errorf("FSDP2 under accelerate: AdamW's states %d bytes, want rank 0's share (%d)", states, want)
	}
	tr, err = Run(context.Background(), Options{Argv: []string{bin, "launch", "--use_fsdp", "--num_processes", "4", fsdp}, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if d := tr.Dist; tr.End == nil || tr.End.Kind != "steps" || d == nil || d.World != 4 ||
		strings.Join(d.Wrappers, ",") != "FullyShardedDataParallel" || !d.Sharded() {
		t.Errorf("FSDP1: end %+v, distributed %+v: want 2 steps as rank 0 of 4 under FullyShardedDataParallel", tr.End, d)
	}
	// one flat parameter of the whole model (accelerate wraps no blocks
	// by default): its 1,579,274 elements padded to 1,579,276, a quarter
	if states, want := firstStepStates(tr), int64(2*4*1579276/4); states != want {
		t.Errorf("FSDP1 under accelerate: AdamW's states %d bytes, want rank 0's share (%d)", states, want)
	}
}

// fsdp2ShardElems: rank 0's share of testdata/fsdp2_train.py's parameters
// in a world of 4, each sharded on its first dimension (three blocks of
// 256->1024->256: 256 and 64 rows of each weight, 256 and 64 of each bias;
// the 10-way head: 3 rows of 10, 3 of its bias).
const fsdp2ShardElems = 3*(256*256+256+64*1024+64) + 3*256 + 3

// firstStepStates: the bytes of the optimizer's states made in the first
// step, its scalars (step counts) left out.
func firstStepStates(tr *estimate.Trace) int64 {
	var n int64
	for _, a := range tr.Allocs {
		if a.Kind == "optstate" && a.Step == 1 && a.Bytes > 8 {
			n += a.Bytes
		}
	}
	return n
}

// TestDistributedFSDP2: fully_shard (FSDP2) under torchrun, traced as rank
// 0 of 4: its shards (DTensors) on meta as on real CPU tensors, the
// all-gathers and reduce-scatters answered, the unsharded blocks freed
// after their forward and refilled for backward (storage resizes). The
// peaks agree to the byte in three layouts (the default, bf16 parameters
// with fp32 reduction, no reshard after forward), AdamW's states are rank
// 0's share, and keeping the unsharded blocks for backward costs memory. A
// model built on meta, sharded, then made with to_empty() and
// reset_parameters() (deferred initialisation) traces too, and so does one
// left on the host for fully_shard to move (as the HF Trainer does). With
// CPU offload (CPUOffloadPolicy, the model made on the GPU or, deferred,
// with to_empty(device="cpu")) the shards, their gradients and AdamW's
// states stay on the host: none on the device, in both modes alike.
func TestDistributedFSDP2(t *testing.T) {
	py := distPython(t, 2, 4)
	script := filepath.Join("testdata", "fsdp2_train.py")
	peaks := map[string]int64{}
	for _, mode := range []string{"default", "bf16", "keep", "deferred", "host", "offload", "offload_deferred", "bf16 offload"} {
		t.Run(mode, func(t *testing.T) {
			run := func(device string) *estimate.Trace {
				args := append([]string{"-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "4", script}, strings.Fields(mode)...)
				return trace(t, py, device, args...)
			}
			meta := run("meta")
			samePeaks(t, meta, run("cpu"))
			if d := meta.Dist; d == nil || d.World != 4 || strings.Join(d.Wrappers, ",") != "fully_shard" {
				t.Errorf("distributed %+v, want rank 0 of 4 under fully_shard", d)
			}
			want, host := int64(2*4*fsdp2ShardElems), int64(0)
			if strings.Contains(mode, "offload") {
				want, host = 0, fsdp2ShardElems
			}
			if states := firstStepStates(meta); states != want {
				t.Errorf("AdamW's states on the device %d bytes, want %d (rank 0's share of two fp32 copies, none offloaded)", states, want)
			}
			if meta.Dist.HostParams != host {
				t.Errorf("%d parameters said to be on the host, want %d", meta.Dist.HostParams, host)
			}
			peaks[mode] = estimate.ReplayTrace(meta, estimate.TraceReplay{}).LiveBytesPeak
		})
	}
	if peaks["keep"] <= peaks["default"] {
		t.Errorf("live peak %d without reshard after forward, %d with: want more kept", peaks["keep"], peaks["default"])
	}
	offloadedPeaks(t, peaks, fsdp2ShardElems, "offload", "offload_deferred")
}

// offloadedPeaks: with CPU offload the device's live peak is at least
// rank 0's fp32 shards and AdamW's two states on them below the default
// layout's.
func offloadedPeaks(t *testing.T, peaks map[string]int64, shardElems int64, modes ...string) {
	t.Helper()
	for _, m := range modes {
		if off := peaks["default"] - 3*4*shardElems; peaks[m] > off {
			t.Errorf("%s: live peak %d, want at most %d (the default's %d less the shards and states on the host)",
				m, peaks[m], off, peaks["default"])
		}
	}
}

// TestDistributedFSDP1: FullyShardedDataParallel under torchrun, traced
// as rank 0 of 4 in the layouts users run it in (testdata/fsdp1_train.py):
// its flat parameters made, sharded, freed and refilled by FSDP's own code
// on meta as on real CPU tensors, to the byte; AdamW's states rank 0's
// share. With CPU offload (traced on meta only) the flat parameters'
// shards, their gradients and AdamW's states stay on the host; cpu mode
// ends the trace saying so.
func TestDistributedFSDP1(t *testing.T) {
	py := distPython(t, 2, 1)
	script := filepath.Join("testdata", "fsdp1_train.py")
	run := func(device, mode string) *estimate.Trace {
		return trace(t, py, device, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "4", script, mode)
	}
	peaks := map[string]int64{}
	for _, mode := range []string{"default", "orig", "bf16", "grad_op", "deferred", "ckpt", "hybrid", "no_shard"} {
		t.Run(mode, func(t *testing.T) {
			meta := run("meta", mode)
			samePeaks(t, meta, run("cpu", mode))
			peaks[mode] = estimate.ReplayTrace(meta, estimate.TraceReplay{}).LiveBytesPeak
			want, wrapper := int64(2*4*fsdp1ShardElems), "FullyShardedDataParallel"
			if mode == "no_shard" {
				want, wrapper = 2*4*fsdp1Elems, "FullyShardedDataParallel NO_SHARD"
			}
			if d := meta.Dist; d == nil || d.World != 4 || strings.Join(d.Wrappers, ",") != wrapper {
				t.Errorf("distributed %+v, want rank 0 of 4 under %s", d, wrapper)
			}
			if states := firstStepStates(meta); states != want {
				t.Errorf("AdamW's states %d bytes, want %d (two fp32 copies of rank 0's parameters)", states, want)
			}
		})
	}
	off := run("meta", "offload")
	// (with FSDP's mixed precision too: the common way to offload)
	if mp := trace(t, py, "meta", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "4", script, "bf16", "offload"); firstStepStates(mp) != 0 ||
		mp.Dist.HostParams != fsdp1ShardElems {
		t.Errorf("bf16 with CPU offload: states on the device %d B, host parameters %d, want none and %d",
			firstStepStates(mp), mp.Dist.HostParams, fsdp1ShardElems)
	}
	if states := firstStepStates(off); states != 0 {
		t.Errorf("CPU offload: AdamW's states on the device %d bytes, want none", states)
	}
	if d := off.Dist; d == nil || d.HostParams != fsdp1ShardElems {
		t.Errorf("CPU offload: %+v, want rank 0's %d parameters said to be on the host", d, fsdp1ShardElems)
	}
	peaks["offload"] = estimate.ReplayTrace(off, estimate.TraceReplay{}).LiveBytesPeak
	offloadedPeaks(t, peaks, fsdp1ShardElems, "offload")
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{py, "-m", "torch.distributed.run", "--standalone",
		"--nproc_per_node", "4", script, "offload"}, Device: "cpu", Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if e := tr.End; e == nil || e.Kind != "error" || e.Op != "FullyShardedDataParallel" || !strings.Contains(e.Message, "meta tensors only") ||
		len(e.Where) == 0 || !strings.Contains(e.Where[0], "fsdp1_train.py:") {
		t.Errorf("CPU offload on cpu tensors: end %+v, want it named at fsdp1_train.py with what to do", e)
	}
}

// fsdp1Elems: fsdp1_train.py's parameters (three blocks of 256->1024->256
// and a 10-way head); fsdp1ShardElems: rank 0's share of its flat
// parameters in a world of 4 (each block's 525,568 elements, the head's
// 2,570 padded to 2,572).
const (
	fsdp1Elems      = 3*525568 + 2570
	fsdp1ShardElems = 3*525568/4 + 2572/4
)

// TestDistributedWithoutLauncher: the same scripts run as plain programs
// (no launcher, no WORLD_SIZE) make a world of one.
func TestDistributedWithoutLauncher(t *testing.T) {
	py := distPython(t, 2, 1)
	tr := trace(t, py, "meta", filepath.Join("testdata", "ddp_train.py"))
	if d := tr.Dist; d == nil || d.World != 1 || d.Launcher != "" {
		t.Errorf("distributed %+v, want a world of 1 and no launcher", d)
	}
	fs := trace(t, py, "meta", filepath.Join("testdata", "fsdp.py"))
	if d := fs.Dist; d == nil || d.World != 1 || strings.Join(d.Wrappers, ",") != "FullyShardedDataParallel" || d.Sharded() {
		t.Errorf("FSDP: distributed %+v, want a world of 1 under FullyShardedDataParallel, nothing sharded", d)
	}
	if states, want := firstStepStates(fs), int64(2*4*(2*(512*512+512))); states != want {
		t.Errorf("FSDP in a world of 1: AdamW's states %d bytes, want all parameters' (%d)", states, want)
	}
}

// accelerateCLI: the `accelerate` console script for py, as pip installs
// it (skips where py has no accelerate), with no accelerate config of this
// machine's.
func accelerateCLI(t *testing.T, py string) string {
	t.Helper()
	if exec.Command(py, "-c", "import accelerate.commands.launch").Run() != nil {
		t.Skip("no accelerate for " + py)
	}
	t.Setenv("HF_HOME", t.TempDir())
	return consoleScript(t, py, "accelerate", "import sys\nfrom accelerate.commands.accelerate_cli import main\nsys.exit(main())\n")
}

// consoleScript: an executable name in a temporary directory that runs
// code with py, as pip's console scripts (torchrun, accelerate, deepspeed) do.
func consoleScript(t *testing.T, py, name, code string) string {
	t.Helper()
	abs, err := filepath.Abs(py)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(bin, []byte("#!"+abs+"\n"+code), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// distPython is torch2Python when its torch is major.minor or later (2.1:
// the fake process group the tracer makes); the test skips otherwise.
func distPython(t *testing.T, major, minor int) string {
	t.Helper()
	py := torch2Python(t)
	if !torchAtLeast(py, major, minor) {
		t.Skipf("the tracer's distributed tests need torch %d.%d or later", major, minor)
	}
	return py
}

// torchAtLeast: py's torch is major.minor or later.
func torchAtLeast(py string, major, minor int) bool {
	out, err := exec.Command(py, "-c", "import torch; print(torch.__version__)").Output()
	return err == nil && versionAtLeast(strings.TrimSpace(string(out)), major, minor)
}
