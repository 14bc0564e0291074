package snapshot

// stackViews are a stack's keys under the groupings other than line,
// computed once per stack.
type stackViews struct {
	library, module, file string
}

func (ss *Sites) views(id StackID) stackViews {
	if v, ok := ss.viewCache[id]; ok {
		return v
	}
	var v stackViews
	if id != stackBeforeTrace {
		stack := ss.snap.Stack(id)
		v = stackViews{library: ss.snap.libraryFrame(stack), module: ss.snap.modulePath(stack), file: ss.snap.fileOf(stack)}
	}
	if ss.viewCache == nil {
		ss.viewCache = map[StackID]stackViews{}
	}
	ss.viewCache[id] = v
	return v
}
