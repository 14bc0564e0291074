package snapshot

import (
	"strconv"
	"strings"
)

// Stack views beyond the user line (sites.go): the library frame that did
// the allocating, the chain of nn.Module forwards, and the file. Each is a
// pure function of the frames, innermost first.

// libraryRoots are the directories under which a Python file belongs to an
// installed package; the path after the root names the library
// ("transformers/activations.py", "torch/nn/functional.py").
var libraryRoots = []string{"/site-packages/", "/dist-packages/"}

// libraryPath returns the path of a library file from its package root
// ("torch/nn/functional.py"), or the base name for other files.
func libraryPath(filename string) string {
	for _, root := range libraryRoots {
		if i := strings.LastIndex(filename, root); i >= 0 {
			return filename[i+len(root):]
		}
	}
	if i := strings.LastIndex(filename, "/torch/"); i >= 0 {
		return filename[i+1:]
	}
	return filename[strings.LastIndexByte(filename, '/')+1:]
}

// plumbingFiles only pass a call on (module __call__, decorators, the
// optimizer's step wrapper, Hugging Face's output capturing): the library
// frame rule skips them when a frame further in is a library frame.
var plumbingFiles = []string{
	"torch/nn/modules/module.py", "torch/utils/_contextlib.py", "torch/optim/optimizer.py",
	"torch/_compile.py", "torch/_dynamo/eval_frame.py", "transformers/utils/generic.py",
	"transformers/utils/output_capturing.py", "transformers/modeling_layers.py", "accelerate/hooks.py",
}

func isPlumbing(path string) bool {
	for _, p := range plumbingFiles {
		if path == p {
			return true
		}
	}
	return false
}

// libraryFrame is the library frame rule: the innermost Python frame in an
// installed library (or torch) that is not plumbing, named by its path from
// the package root, line and function ("transformers/activations.py:66
// forward"). Without one: the innermost library frame even if plumbing;
// for C++-only stacks (the autograd engine's thread), the autograd node
// being applied ("AddmmBackward0 (autograd)"), else "".
func (s *Snapshot) libraryFrame(stack []FrameID) string {
	first := ""
	for _, fid := range stack {
		f := s.Frames[fid]
		if f.Kind() != FrameLibrary {
			continue
		}
		label := libraryPath(f.Filename) + ":" + strconv.FormatInt(f.Line, 10) + " " + f.Name
		if !isPlumbing(libraryPath(f.Filename)) {
			return label
		}
		if first == "" {
			first = label
		}
	}
	if first != "" {
		return first
	}
	return s.autogradNode(stack)
}

// autogradNode names the innermost autograd node applied in a C++ stack
// ("torch::autograd::generated::AddmmBackward0::apply(...)" ->
// "AddmmBackward0 (autograd)"), or "AccumulateGrad (autograd)".
func (s *Snapshot) autogradNode(stack []FrameID) string {
	const gen = "torch::autograd::generated::"
	for _, fid := range stack {
		name := s.Frames[fid].Name
		if rest, ok := strings.CutPrefix(name, gen); ok {
			if node, _, ok := strings.Cut(rest, "::apply"); ok && !strings.Contains(node, "::") {
				return node + " (autograd)"
			}
		}
		if strings.HasPrefix(name, "torch::autograd::AccumulateGrad::") {
			return "AccumulateGrad (autograd)"
		}
	}
	return ""
}

// modulePath is the module rule: the forwards of the nn.Modules the
// allocation happened in, outermost first, each as "file.py:line" of its
// forward frame (the line says which submodule or op it was running):
// a frame is a module's forward when the frame calling it is
// torch/nn/modules/module.py's _call_impl. "" when the stack shows none.
func (s *Snapshot) modulePath(stack []FrameID) string {
	var parts []string
	for i := 0; i+1 < len(stack); i++ {
		caller := s.Frames[stack[i+1]]
		if caller.Name != "_call_impl" || !strings.HasSuffix(caller.Filename, "torch/nn/modules/module.py") {
			continue
		}
		f := s.Frames[stack[i]]
		parts = append(parts, f.Filename[strings.LastIndexByte(f.Filename, '/')+1:]+":"+strconv.FormatInt(f.Line, 10))
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, " > ")
}

// fileOf is the file rule: the file of the innermost Python frame, by its
// path from the package root for libraries, else its base name.
func (s *Snapshot) fileOf(stack []FrameID) string {
	for _, fid := range stack {
		if f := s.Frames[fid]; f.Kind() != FrameNative {
			return libraryPath(f.Filename)
		}
	}
	return ""
}
