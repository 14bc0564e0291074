package lint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeAST: the decoder must never panic, and must agree with
// encoding/json about what is valid JSON.
func FuzzDecodeAST(f *testing.F) {
	for _, s := range []string{
		`{"path":"a.py","ast":{"_":"Module","body":[{"_":"Expr","l":1,"c":0,"value":{"_":"Call","l":1,"c":0,"func":{"_":"Name","l":1,"c":0,"id":"f"},"args":[{"_":"Constant","l":1,"c":2,"value":"x\u00e9\ud83d\ude00"}]}}]}}`,
		`{"path":"b.py","error":{"msg":"syntax error: invalid syntax","line":3,"col":7}}`,
		`{"_":"Global","l":1,"c":0,"names":["a","b"]}`,
		`{"_":"Dict","keys":[null,{"_":"Name","id":"k"}],"values":[]}`,
		`[1,2,{"a":-1.5e3}]`, `{"_":1}`, `{"_":"X","l":1e99}`, `"\ud800"`, `{`, `[[[[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := newASTDecoder(data).decodeTop()
		if err == nil && !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q as %v", data, v)
		}
		if n, ok := v.(*Node); ok && err == nil {
			n.Walk(func(c *Node) bool { _ = c.K("func"); _ = c.L("body"); return true })
		}
		_, _ = decodeHelperLine(data)
	})
}

// decodeAST turns the helper's JSON for one module into a tree with parent
// links (decodeHelperLine does this for the tool; tests decode bare
// nodes). Malformed input is an error naming the offset, never a panic.
func decodeAST(raw []byte) (*Node, error) {
	v, err := newASTDecoder(raw).decodeTop()
	if err != nil {
		return nil, err
	}
	n, ok := v.(*Node)
	if !ok {
		return nil, fmt.Errorf("decode ast json: top level is %T, not a node", v)
	}
	return n, nil
}

func TestDecodeASTErrors(t *testing.T) {
	for _, s := range []string{`{"_":"Call","args":[1]}`, `{"_":""}`, `{"_":"A"} x`, `{"a":}`, `nul`, `"\q"`} {
		if _, err := decodeAST([]byte(s)); err == nil {
			t.Errorf("%s: want an error", s)
		}
	}
	n, err := decodeAST([]byte(`{"_":"Call","l":3,"c":4,"func":{"_":"Attribute","l":3,"c":4,"value":{"_":"Name","l":3,"c":4,"id":"torch"},"attr":"load"},"args":[{"_":"Constant","l":3,"c":15,"value":"a\nb"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if dotted(n.K("func")) != "torch.load" || n.Line != 3 || n.Col != 4 || n.L("args")[0].Value != "a\nb" || n.L("args")[0].Parent != n {
		t.Fatalf("decoded %+v", n)
	}
}

// FuzzRules: every rule must survive any tree the decoder accepts (missing
// fields, wrong node types in odd places), not only trees Python makes.
func FuzzRules(f *testing.F) {
	f.Add([]byte(`{"_":"Module","body":[{"_":"For","l":1,"c":0,"target":{"_":"Name","id":"x"},"iter":{"_":"Name","id":"val_loader"},"body":[{"_":"AugAssign","l":2,"c":4,"target":{"_":"Name","id":"t"},"op":{"_":"Add"},"value":{"_":"Call","l":2,"c":9,"func":{"_":"Name","id":"model"},"args":[{"_":"Name","id":"x"}]}}]}]}`))
	f.Add([]byte(`{"_":"Module","body":[{"_":"ClassDef","name":"D","bases":[{"_":"Name","id":"Dataset"}],"body":[{"_":"FunctionDef","name":"__getitem__","args":{"_":"arguments"},"body":[{"_":"Expr","value":{"_":"Call","func":{"_":"Attribute","attr":"cuda"}}}]}]},{"_":"Expr","value":{"_":"Call","func":{"_":"Name","id":"DataLoader"},"args":[{"_":"Call","func":{"_":"Name","id":"D"}}],"keywords":[{"_":"keyword","arg":"num_workers","value":{"_":"Constant","value":4}},{"_":"keyword","arg":"collate_fn"}]}}]}`))
	f.Add([]byte(`{"_":"Module","body":[{"_":"If","test":{"_":"BinOp","op":{"_":"Mod"}},"body":[{"_":"Expr","value":{"_":"Call","func":{"_":"Attribute","attr":"step","value":{"_":"Name","id":"optimizer"}}}}]}]}`))
	path := filepath.Join(f.TempDir(), "x.py")
	if err := os.WriteFile(path, []byte("x = 1\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	procs, shm := uint64(10), uint64(1<<20)
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := decodeAST(data)
		if err != nil || n.Type != "Module" {
			return
		}
		_, _ = lintParsed([]Parsed{{Path: path, Module: n}}, Options{Host: &Host{MaxProcs: &procs, ShmBytes: &shm}})
	})
}
