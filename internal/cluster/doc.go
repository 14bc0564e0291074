// Package cluster is the cluster view: it reads what every torchmem agent
// (`torchmem serve`) exported back from the Prometheus that scrapes them,
// through the Prometheus HTTP API, and arranges it as nodes with their
// jobs, GPUs and recent OOMs. The cluster is Prometheus's: torchmem keeps
// no list of nodes and talks to no agent; a node is a scrape target that
// exported torchmem series within the window, and its liveness is
// Prometheus's own `up`.
//
// Exported API:
//
//	c, err := cluster.New(cluster.Options{URL: "http://prometheus:9090", TokenFile: "…"})
//	sum, err := c.Fetch(ctx)          // one *Summary: Nodes → Jobs, GPUs, OOMs
//	cluster.Queries(window)           // the PromQL it runs, by name
//	cluster.Assemble(results, at, w)  // pure: query results → *Summary
//
// Every figure is the agent's own series (metric names in docs/serve.md);
// OOM counts are increase() over the window, so they count what happened
// while Prometheus watched, not since boot.
package cluster
