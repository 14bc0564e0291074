package lint

// TM006 and datasets that keep only file paths or prompts.
//
//	self.video_paths = sorted(os.path.join(d, f) for f in os.listdir(d))
//	self.samples.append((img_path, txt_path, stem))
//
// Lists like these are what fine-tuning sets of tens to thousands of files
// keep: copy-on-read costs a few KiB per worker. The same lists are reported
// when the class also keeps per-sample records or arrays (yolov5's labels
// beside its im_files: an annotated dataset, sized in 10^5-10^6 samples),
// or when they come from an annotation file (json/pickle).

// pathWords name a string that is a file path or a prompt.
var pathWords = []string{"path", "paths", "file", "files", "filename", "filenames", "fname", "fnames",
	"prompt", "prompts", "caption", "captions", "stem", "stems", "url", "urls"}

// onlyPathStrings reports that every attribute in attrs holds path or
// prompt strings and none was loaded from an annotation file.
func onlyPathStrings(attrs []sampleAttr) bool {
	for _, a := range attrs {
		if a.dict || !(anyToken(wordTokens(a.target.S("attr")), pathWords...) || pathString(a.elem)) {
			return false
		}
	}
	return len(attrs) > 0
}

// pathString reports an element expression that builds a path or prompt
// string: a path-named variable, os.path.join(...), an f-string, a string
// method of one of those, or a tuple of them.
func pathString(e *Node) bool {
	switch e.TypeOr() {
	case "Name", "Attribute":
		return anyToken(wordTokens(lastName(e)), pathWords...)
	case "JoinedStr":
		return true
	case "Subscript":
		return pathString(e.K("value"))
	case "BinOp":
		return pathString(e.K("left")) || pathString(e.K("right"))
	case "Tuple":
		for _, x := range e.L("elts") {
			if !pathString(x) {
				return false
			}
		}
		return len(e.L("elts")) > 0
	case "Call":
		if dotted(e.K("func")) == "os.path.join" {
			return true
		}
		recv, m := methodCall(e)
		switch m {
		case "replace", "strip", "lstrip", "rstrip", "lower", "format":
			return pathString(recv)
		}
	}
	return false
}

// elemOf returns the expression of one element of a comprehension (or of
// list()/sorted() over a generator), or nil.
func elemOf(v *Node) *Node {
	switch v.TypeOr() {
	case "ListComp", "SetComp", "GeneratorExp":
		return v.K("elt")
	case "DictComp":
		return v.K("value")
	case "Call":
		if q := dotted(v.K("func")); (q == "list" || q == "sorted") && len(v.L("args")) == 1 {
			return elemOf(v.L("args")[0])
		}
	}
	return nil
}
