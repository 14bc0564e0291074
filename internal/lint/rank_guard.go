package lint

import "strings"

// Rank-0 guards: code that only one process of a multi-process job runs.
//
//	if rank != 0:                      # early exit: the rest is rank 0 only
//	    return
//	if dist.get_rank() == 0: ...       # the body is rank 0 only
//	if accelerator.is_main_process: ...

// mainProcessNames are flags that are true in exactly one process.
var mainProcessNames = map[string]bool{
	"is_main_process": true, "is_local_main_process": true, "is_master": true,
	"is_main": true, "is_rank_zero": true, "is_rank0": true, "main_process": true,
	"is_global_zero": true, "master_process": true,
}

// rankNames are values that number the processes of a job.
var rankNames = map[string]bool{
	"rank": true, "local_rank": true, "global_rank": true, "get_rank": true,
	"process_index": true, "local_process_index": true, "rank_id": true,
}

// rankZeroOnly reports that n runs in one process only: it sits in the
// body of an `if` on a rank-0 test, or after an `if <not rank 0>: return`
// in its function.
func rankZeroOnly(n *Node) bool {
	for c := n; c.Parent != nil; c = c.Parent {
		p := c.Parent
		if p.Is("If") && c.Field == "body" && isRankZeroTest(p.K("test"), true) {
			return true
		}
		if p.Is("If") && c.Field == "orelse" && isRankZeroTest(p.K("test"), false) {
			return true
		}
		if p.Is("FunctionDef", "AsyncFunctionDef") && c.Field == "body" {
			return exitsUnlessRankZero(p.L("body"), c)
		}
	}
	return false
}

// exitsUnlessRankZero reports an `if <not rank 0>: return` among the
// statements of body before stmt.
func exitsUnlessRankZero(body []*Node, stmt *Node) bool {
	for _, s := range body {
		if s == stmt {
			return false
		}
		if s.Is("If") && isRankZeroTest(s.K("test"), false) && endsInReturn(s.L("body")) {
			return true
		}
	}
	return false
}

func endsInReturn(body []*Node) bool {
	return len(body) > 0 && body[len(body)-1].Is("Return", "Raise")
}

// isRankZeroTest reports that test is true in rank 0 only (want true) or in
// every rank but 0 (want false).
func isRankZeroTest(test *Node, want bool) bool {
	switch {
	case test.Is("UnaryOp") && test.K("op").Is("Not"):
		return isRankZeroTest(test.K("operand"), !want)
	case test.Is("Name", "Attribute"):
		return want && mainProcessNames[strings.ToLower(lastName(test))]
	case test.Is("Call"):
		return want && mainProcessNames[strings.ToLower(lastName(test.K("func")))]
	case test.Is("Compare") && len(test.L("ops")) == 1:
		l, r := test.K("left"), test.L("comparators")[0]
		if v, ok := constInt(l); ok && v == 0 {
			l, r = r, l
		}
		if v, ok := constInt(r); !ok || v != 0 || !isRankValue(l) {
			return false
		}
		op := test.L("ops")[0]
		return want && op.Is("Eq") || !want && op.Is("NotEq", "Gt")
	}
	return false
}

func isRankValue(n *Node) bool {
	if n.Is("Call") {
		n = n.K("func")
	}
	return n.Is("Name", "Attribute") && rankNames[strings.ToLower(lastName(n))]
}
