package lint

// TM019: a tensor created on the CPU and copied to the GPU at once, on
// every step of a hot loop (one that runs a model, a loss, a backward or an
// optimizer step, or iterates over a loader):
//
//	noise = torch.randn(b, nz, 1, 1).cuda()          # TM019
//	noise = torch.randn(b, nz, 1, 1, device=device)  # fine
//
// PyTorch's performance tuning guide: "create tensors directly on the
// target device" instead of torch.rand(size).cuda().

// factories build a tensor from a shape: created where device= says.
var factories = map[string]bool{
	"zeros": true, "ones": true, "empty": true, "full": true, "rand": true, "randn": true,
	"randint": true, "randperm": true, "arange": true, "linspace": true, "logspace": true, "eye": true,
}

func checkTM019(f *file) {
	for _, call := range f.nodes("Call") {
		recv, m := methodCall(call)
		if !recv.Is("Call") || !f.movesToCUDA(call, m) {
			continue
		}
		fn := recv.K("func")
		q := f.qualify(fn)
		if q != "torch."+lastName(fn) || !factories[lastName(fn)] || kwarg(recv, "device") != nil || hasStarKwargs(recv) {
			continue
		}
		// Once per run (fixed noise, a sample per epoch) costs nothing worth
		// a finding; every step of a training or evaluation loop does.
		loops := loopsOf(call)
		if len(loops) == 0 || !f.hotLoop(loops[0]) {
			continue
		}
		f.report(call, "TM019", "tm019.moved", q, m, loops[0].Line)
	}
}

// movesToCUDA: .cuda(), or .to(X) where X names a CUDA device.
func (f *file) movesToCUDA(call *Node, m string) bool {
	switch m {
	case "cuda":
		return true
	case "to":
		if d := kwarg(call, "device"); d != nil {
			return f.cudaDevice(d)
		}
		return f.cudaDevice(firstArg(call))
	}
	return false
}
