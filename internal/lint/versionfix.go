package lint

import "strings"

// versioned fits a finding to the file's PyTorch: a fix names only APIs
// that exist there, and a rule about an API change is dropped where the
// change has not happened. It returns false to drop the finding. Unknown
// versions keep today's advice.
func versioned(fd *Finding, v TorchVersion) bool {
	if !v.Known() {
		return true
	}
	on := word("version.on", v.String(), v.Source)
	switch fd.Rule {
	case "TM001":
		if !v.AtLeast(1, 9) {
			fd.setFix("version.tm001.fix", on)
		}
	case "TM004":
		if !v.AtLeast(2, 0) {
			fd.setFix("version.tm004.fix", on)
		}
	case "TM005":
		switch {
		case !v.AtLeast(1, 10):
			fd.setFix("version.tm005.fix_old", on)
		case !v.AtLeast(2, 1):
			fd.setFix("version.tm005.fix", on)
		}
	case "TM009":
		return versionedAMP(fd, v, on)
	}
	return true
}

// versionedAMP: torch.amp.autocast("cuda") exists from 1.10,
// torch.amp.GradScaler("cuda") from 2.3, torch.amp.custom_fwd from 2.4,
// and the torch.cuda.amp spellings warn from 2.4.
func versionedAMP(fd *Finding, v TorchVersion, on msg) bool {
	scaler := strings.Contains(fd.Message, "GradScaler is deprecated")
	custom := strings.Contains(fd.Message, "custom_fwd") || strings.Contains(fd.Message, "custom_bwd")
	switch {
	case !v.AtLeast(1, 10), scaler && !v.AtLeast(2, 3), custom && !v.AtLeast(2, 4):
		return false // no replacement exists there
	case !v.AtLeast(2, 3):
		fd.setFix("version.tm009.fix", on)
	}
	if !v.AtLeast(2, 4) {
		fd.setMessage("version.tm009.warns_from", fd.text.msg, on)
	}
	return true
}
