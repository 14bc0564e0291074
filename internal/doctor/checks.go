package doctor

// Checks returns every check, in report order.
func Checks() []Check {
	return []Check{
		{"vm.swappiness", checkSwappiness},
		{"thp", checkTHP},
		{"vm.overcommit_memory", checkOvercommit},
		{"vm.min_free_kbytes", checkMinFree},
		{"swap", checkSwap},
		{"psi", checkPSI},
		{"oom.history", checkOOMHistory},
		{"kernel.smaps_rollup", checkSmapsRollup},
		{"ulimit.nproc", checkNproc},
		{"ulimit.nofile", checkNofile},
		{"ulimit.memlock", checkMemlock},
		{"dev.shm", checkShm},
		{"kernel.pid_max", checkPidMax},
		{"cgroup.version", checkCgroupVersion},
		{"cgroup.limit", checkCgroupLimit},
		{"cgroup.slice", checkSlices},
		{"cgroup.accounting", checkAccounting},
		{"cgroup.delegation", checkDelegation},
		{"numa.nodes", checkNUMANodes},
		{"numa.policy", checkNUMAPolicy},
		{"numa.gpu", checkGPUNUMA},
		{"gpu.nvml", checkGPUSource},
		{"gpu.modes", checkGPUModes},
		{"gpu.processes", checkGPUProcesses},
		{"gpu.cuda_compat", checkCUDACompat},
		{"pytorch.versions", checkPythonEnv},
		{"pytorch.hook", checkHook},
		{"pytorch.nccl", checkNCCL},
		{"pytorch.alloc_conf", checkAllocConf},
		{"pytorch.cuda_module_loading", checkModuleLoading},
	}
}
