package lint

import (
	"encoding/json"
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
