package lint

import (
	"fmt"
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
		for _, name := range []string{"__getitem__", "__getitems__"} {
			get := method(cls, name)
			if get == nil {
				continue
			}
			walkScope(get, func(n *Node) {
				if n.Is("Call") && f.qualify(n.K("func")) == "gc.collect" && !insideIf(n) {
					f.report(n, "TM017", fmt.Sprintf(
						"gc.collect() in %s.%s runs a full garbage collection for every sample", cls.S("name"), name))
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
		walkScope(init, func(n *Node) {
			if !n.Is("Assign") {
				return
			}
			call := n.K("value")
			kind := sharedHandleOpeners[f.qualify(call.K("func"))]
			if !call.Is("Call") || kind == "" {
				return
			}
			for _, t := range n.L("targets") {
				if strings.HasPrefix(dotted(t), "self.") && !closedIn(init, dotted(t)) {
					f.report(call, "TM018", fmt.Sprintf(
						"%s opens a %s handle in __init__ (%s) and %s is read by DataLoader workers: every worker inherits the one handle",
						cls.S("name"), kind, dotted(t), cls.S("name")))
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
