package jobcgroup

// Handle is what another process needs to kill and remove a group it did
// not create: a later run cleaning up after a supervisor that died (it is
// written to the run directory as JSON).
type Handle struct {
	Version int    `json:"version"`
	Mount   string `json:"mount"`
	Rel     string `json:"rel"`
	Freezer string `json:"freezer,omitempty"`
}

// Handle returns the group's handle.
func (g *Group) Handle() Handle {
	return Handle{Version: g.version, Mount: g.mount, Rel: g.rel, Freezer: g.freezer}
}

// FromHandle returns the group a Handle names, for Procs, Kill and Delete.
func FromHandle(h Handle) *Group {
	return &Group{version: h.Version, mount: h.Mount, rel: h.Rel, freezer: h.Freezer}
}
