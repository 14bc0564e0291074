package python

import (
	"os/exec"
	"testing"
)

// TestDeepSpeedNames runs _trace_deepspeed's pure rules on the names
// DeepSpeed's ZeRO optimizers give their buffers (stages 1-3, versions
// 0.9 to 0.19: the reduce buckets, the flat partitions, the fp32 master
// weights, offload's buffers) and on its op names: each buffer counts as
// what it is, and an op other than the optimizers' is refused by name.
// Needs only python3 (no torch, no DeepSpeed): fast enough for -short.
func TestDeepSpeedNames(t *testing.T) {
	py, dir := pythonAndTree(t)
	script := `
import sys
sys.path.insert(0, sys.argv[1])
from torchmem_hook import _trace_deepspeed as ds
want = {
    "ipg_buffer": "grad",
    "ipg_buckets.buffer": "grad",
    "_DeepSpeedZeroOptimizer_Stage3__ipg_bucket_flat_buffer": "grad",
    "grad_partitions_flat_buffer": "grad",
    "grads_in_partition": "grad",
    "averaged_gradients": "grad",
    "fp32_groups_gradients_flat": "grad",
    "temp_grad_buffer_for_gpu_offload": "grad",
    "single_partition_of_fp32_groups": "optstate",
    "fp32_partitioned_groups_flat": "optstate",
    "bit16_groups_flat": "param",
    "fp16_groups_flat": "param",
    "fp16_partitioned_groups_flat": "param",
    "lp_param_buffer": "param",
    "param.ds_tensor": "param",
    "partition_size": "",
    "loss_scaler.cur_scale": "",
}
for path, kind in want.items():
    got = ds.zero_kind(path)
    assert got == kind, (path, got, kind)
op = ds.op_for("fused_adam")
assert op.multi_tensor_adam(65536, None, [[], [], [], []], 1e-3) is None
assert ds.op_for("fused_lamb").lamb() == 1.0
assert ds.op_for("cpu_adam").create_adam(0, 1e-3) == 0
try:
    ds.op_for("quantizer")
    raise SystemExit("quantizer was not refused")
except RuntimeError as e:
    assert "DeepSpeed op quantizer" in str(e), e
`
	if out, err := exec.Command(py, "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
