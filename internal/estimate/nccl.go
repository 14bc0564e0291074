package estimate

// NCCL's communicator holds device memory of its own, outside PyTorch's
// allocator: in nvidia-smi's figure, not in reserved. It depends on the
// channels, algorithms and transports NCCL picks (NVIDIA/nccl#986), so
// these are measured figures for one communicator, not a formula:
//   - world of 1 or 2: 536 MiB. Measured on the H200 (torch 2.11, CUDA
//     13): NVML's figure over reserved + context + libraries was 535 MiB
//     for DDP and 538 MiB for FSDP2 under torchrun with one rank
//     (bench/device/trace_real.sh's ddp-torchrun, fsdp2-streams); NCCL
//     2.28 makes a 512 MiB shared buffer even for a single-rank
//     communicator (NVIDIA/nccl#2363); 544 MB for two A100s over NVLink
//     (NVIDIA/nccl#964).
//   - more ranks: 688 MB, four A100s over NVLink (NVIDIA/nccl#964).
//
// Each further communicator (HSDP's, tensor parallelism's second group,
// an all-to-all's channels: NVIDIA/nccl#1685) holds as much again, which
// is not counted.
const (
	ncclSmallWorldBytes = 536 << 20
	ncclBytesPerComm    = 688 << 20
	ncclSmallWorld      = 2
)

// ncclItem is the breakdown line of one NCCL communicator of world ranks.
func ncclItem(world int) Item {
	n := int64(ncclBytesPerComm)
	if world <= ncclSmallWorld {
		n = ncclSmallWorldBytes
	}
	return Item{"nccl_communicator", n}
}
