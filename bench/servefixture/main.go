// Command servefixture writes the node bench/serve-agent.sh measures
// `torchmem serve` on: a fixture proc/sys tree of one PyTorch job with 200
// processes (real captured files, internal/sample/sampletest) and a fake
// GPU file of 8 H200s on which the main process and 63 workers hold memory.
//
//	go run ./bench/servefixture DIR
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: servefixture DIR")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "servefixture:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	tree, err := sampletest.WriteJobTree(dir, 199)
	if err != nil {
		return err
	}
	const total = 150754820096
	var devs []gpu.Device
	var procs []gpu.Process
	for i := 0; i < 8; i++ {
		used := int64(40+i) << 30
		devs = append(devs, gpu.Device{Index: i, UUID: fmt.Sprintf("GPU-%d", i), Name: "NVIDIA H200",
			TotalBytes: total, UsedBytes: used, FreeBytes: total - used, NUMANode: i / 4})
	}
	for k, pid := range tree.PIDs[:64] {
		used := int64(1 << 30)
		procs = append(procs, gpu.Process{GPUIndex: k % 8, GPUUUID: fmt.Sprintf("GPU-%d", k%8), PID: pid, HostPID: pid, UsedBytes: &used})
	}
	b, err := json.Marshal(map[string]any{"info": gpu.Info{Backend: "fake", DriverVersion: "580.159.04"}, "devices": devs, "processes": procs})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "gpus.json"), b, 0o644)
}
