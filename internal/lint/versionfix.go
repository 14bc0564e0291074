package lint

import (
	"fmt"
	"strings"
)

// versioned fits a finding to the file's PyTorch: a fix names only APIs
// that exist there, and a rule about an API change is dropped where the
// change has not happened. It returns false to drop the finding. Unknown
// versions keep today's advice.
func versioned(fd *Finding, v TorchVersion) bool {
	if !v.Known() {
		return true
	}
	on := fmt.Sprintf(" (PyTorch %s here, from %s)", v, v.Source)
	switch fd.Rule {
	case "TM001":
		if !v.AtLeast(1, 9) {
			fd.Fix = "wrap the evaluation in `with torch.no_grad():`, or decorate the function with `@torch.no_grad()`; torch.inference_mode needs PyTorch 1.9" + on
		}
	case "TM004":
		if !v.AtLeast(2, 0) {
			fd.Fix = "call `optimizer.zero_grad(set_to_none=True)` once per optimizer step: before PyTorch 2.0 the default is set_to_none=False" + on
		}
	case "TM005":
		switch {
		case !v.AtLeast(1, 10):
			fd.Fix = "remove it from the loop" + on
		case !v.AtLeast(2, 1):
			fd.Fix = "remove it from the loop; if fragmentation is the problem set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 (expandable_segments needs PyTorch 2.1)" + on
		}
	case "TM009":
		return versionedAMP(fd, v, on)
	}
	return true
}

// versionedAMP: torch.amp.autocast("cuda") exists from 1.10,
// torch.amp.GradScaler("cuda") from 2.3, torch.amp.custom_fwd from 2.4,
// and the torch.cuda.amp spellings warn from 2.4.
func versionedAMP(fd *Finding, v TorchVersion, on string) bool {
	scaler := strings.Contains(fd.Message, "GradScaler is deprecated")
	custom := strings.Contains(fd.Message, "custom_fwd") || strings.Contains(fd.Message, "custom_bwd")
	switch {
	case !v.AtLeast(1, 10), scaler && !v.AtLeast(2, 3), custom && !v.AtLeast(2, 4):
		return false // no replacement exists there
	case !v.AtLeast(2, 3):
		fd.Fix = "use `torch.amp.autocast(\"cuda\", ...)`; keep `torch.cuda.amp.GradScaler()` until PyTorch 2.3, which adds `torch.amp.GradScaler(\"cuda\")`" + on
	}
	if !v.AtLeast(2, 4) {
		fd.Message += "; it warns from PyTorch 2.4" + on
	}
	return true
}
