package lint

import (
	"strings"
)

// Dataset rules added for issue 21: TM017 (gc.collect() per sample) and
// TM018 (an HDF5/LMDB handle opened in __init__ and inherited by workers).
//
//	class H5Dataset(Dataset):
//	    def __init__(self, path):
//	        self.db = h5py.File(path, "r")   # TM018: forked into every worker
//	    def __getitem__(self, i):
//	        gc.collect()                     # TM017: a full collection per sample
//	        return self.db["images"][i]

func checkTM017(f *file) {
	for _, cls := range f.datasetClasses() {
		for _, name := range []string{"__getitem__", "__getitems__", "__iter__"} {
			get := method(cls, name)
			if get == nil {
				continue
			}
			walkScope(get, func(n *Node) {
				if name == "__iter__" && len(loopsOf(n)) == 0 {
					return // once per epoch's iterator, not per sample
				}
				if n.Is("Call") && f.qualify(n.K("func")) == "gc.collect" && !insideIf(n) {
					f.report(n, "TM017", "tm017.gc", cls.S("name"), name)
				}
			})
		}
	}
}

// sharedHandleOpeners open files whose handles must not cross a fork:
// h5py ("h5py objects cannot be pickled", and HDF5 state is not fork-safe)
// and LMDB ("the environment must not be used in a child after fork").
var sharedHandleOpeners = map[string]string{
	"h5py.File": "HDF5", "lmdb.open": "LMDB", "lmdb.Environment": "LMDB",
	"tables.open_file": "HDF5 (PyTables)",
}

func checkTM018(f *file) {
	for _, cls := range f.datasetClasses() {
		init := method(cls, "__init__")
		if init == nil || !f.proj.workerClasses[cls.S("name")] {
			continue
		}
		locals := map[string]string{} // h5f = h5py.File(...): the local's handle kind
		walkScope(init, func(n *Node) {
			if !n.Is("Assign") {
				return
			}
			call := n.K("value")
			kind := sharedHandleOpeners[f.qualify(call.K("func"))]
			if !call.Is("Call") || kind == "" {
				call, kind = handleKept(n.K("value"), locals)
			}
			if kind == "" {
				return
			}
			for _, t := range n.L("targets") {
				if t.Is("Name") && call == n.K("value") && !closedIn(init, t.S("id")) {
					locals[t.S("id")] = kind
				}
				if strings.HasPrefix(dotted(t), "self.") && !closedIn(init, dotted(t)) {
					f.report(call, "TM018", "tm018.handle", cls.S("name"), kind, dotted(t))
					if call.Is("Name") {
						delete(locals, call.S("id")) // one finding per handle
					}
				}
			}
		})
	}
}

// closedIn: __init__ only peeks (reads the length, the keys) and closes the
// handle or drops it again (self.db.close(), self.db = None).
func closedIn(init *Node, attr string) bool {
	return findInScope(init, func(n *Node) bool {
		if recv, m := methodCall(n); m == "close" && dotted(recv) == attr {
			return true
		}
		if n.Is("Assign") && n.K("value").Is("Constant") && n.K("value").Value == nil {
			for _, t := range n.L("targets") {
				if dotted(t) == attr {
					return true
				}
			}
		}
		return false
	}) != nil
}

// handleKept reports v = h5f or h5f["name"] where h5f is a local handle:
// the value keeps the file open (an h5py Dataset, not an array read from it
// with h5f["name"][:]). It returns the handle's opening call, or nil.
func handleKept(v *Node, locals map[string]string) (*Node, string) {
	if v.Is("Subscript") {
		v = v.K("value")
	}
	if v.Is("Name") && locals[v.S("id")] != "" {
		return v, locals[v.S("id")]
	}
	return nil, ""
}
