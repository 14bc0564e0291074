package pickle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func decodeBytes(t testing.TB, b []byte, known bool) (*Decoder, Value, error) {
	t.Helper()
	size := int64(-1)
	if known {
		size = int64(len(b))
	}
	d := NewDecoder(bytes.NewReader(b), Options{Size: size})
	v, err := d.Decode()
	if known { // the same bytes decoded in place must give the same
		d2 := NewBytesDecoder(b, Options{})
		v2, err2 := d2.Decode()
		if fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Errorf("in place: error %v, from a reader: %v", err2, err)
		} else if err == nil {
			x, e := d.ToAny(v, 64)
			x2, e2 := d2.ToAny(v2, 64)
			if fmt.Sprint(x, e) != fmt.Sprint(x2, e2) {
				t.Errorf("in place: %v, from a reader: %v", x2, x)
			}
		}
	}
	return d, v, err
}

// TestAgainstCPython decodes pickles written by CPython (protocols 2-5, see
// testdata/gen.py) and compares with CPython's own JSON of the same object.
func TestAgainstCPython(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.pickle")
	if len(files) < 16 {
		t.Fatalf("found %d test pickles, want 16", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d, v, err := decodeBytes(t, raw, true)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.ToAny(v, 100)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.SplitN(filepath.Base(f), ".", 2)[0]
			want, _ := os.ReadFile(filepath.Join("testdata", name+".json"))
			if !sameJSON(t, got, want) {
				t.Errorf("decoded value differs from CPython's")
			}
		})
	}
}

func sameJSON(t *testing.T, got any, want []byte) bool {
	gb, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(gb, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(g, w)
}

// TestSharedContainers checks that the memo returns the same container,
// as CPython does: frame lists are shared between blocks and traces.
func TestSharedContainers(t *testing.T) {
	raw, _ := os.ReadFile("testdata/nested.p4.pickle")
	d, v, err := decodeBytes(t, raw, true)
	if err != nil {
		t.Fatal(err)
	}
	segs := d.Items(d.Items(v)[1]) // keys in insertion order: "segments" first
	if len(segs) != 2 || segs[0] != segs[1] {
		t.Fatalf("the two segment entries are not the same shared dict")
	}
}

func TestMalformed(t *testing.T) {
	deep := append(bytes.Repeat([]byte{']', '('}, 200000), '.')
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", "truncated"},
		{"truncated string", "\x80\x04\x8c\x05ab", "truncated|exceeds"},
		{"truncated int", "\x80\x04J\x01\x02", "truncated"},
		{"global", "\x80\x02cos\nsystem\n.", "GLOBAL: opcode 0x63 refused"},
		{"stack_global", "\x80\x04\x8c\x02os\x8c\x06system\x93.", "STACK_GLOBAL"},
		{"reduce", "\x80\x02N)R.", "REDUCE"},
		{"build", "\x80\x02}}b.", "BUILD"},
		{"inst", "\x80\x02(ios\nsystem\n.", "INST"},
		{"obj", "\x80\x02(No.", "OBJ"},
		{"newobj", "\x80\x02N)\x81.", "NEWOBJ"},
		{"memo out of range", "\x80\x02h\x05.", "memo index 5 was never stored"},
		{"long memo out of range", "\x80\x02j\xff\xff\xff\xff.", "memo index 4294967295"},
		{"huge unicode8", "\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7fabc.", "exceeds the rest|bytes of strings"},
		{"huge unicode", "\x80\x04X\xff\xff\xff\xffabc.", "exceeds the rest|bytes of strings"},
		{"huge long4", "\x80\x04\x8b\xff\xff\xff\x7f.", "exceeds the rest|bytes of strings"},
		{"negative long4", "\x80\x04\x8b\xff\xff\xff\xff.", "negative"},
		{"huge frame", "\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\xff.", "exceeds the rest|STOP with 0"},
		{"append to dict", "\x80\x02}K\x01a.", "target is a dict"},
		{"setitems odd", "\x80\x02}(K\x01u.", "odd number"},
		{"no mark", "\x80\x02]e.", "no MARK"},
		{"underflow", "\x80\x02\x86.", "underflow"},
		{"stop early", "\x80\x02K\x01K\x01.", "STOP with 2 values"},
		{"proto 9", "\x80\x09N.", "protocol 9"},
		{"unknown op", "\x80\x02\xff.", "unknown opcode"},
		{"deep nesting, no stop", string(deep[:len(deep)-1]), "nesting deeper"},
		{"deep nesting", string(deep), "nesting deeper"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, known := range []bool{true, false} {
				_, _, err := decodeBytes(t, []byte(c.in), known)
				if err == nil || !mentionsAny(err.Error(), c.want) {
					t.Errorf("size known=%v: err = %v, want it to mention %q", known, err, c.want)
				}
			}
		})
	}
}

// TestHugeLengthUnknownSize: with the size unknown (compressed input), a
// declared 4 GiB string is refused by the string budget before anything is
// read, and one within the budget fails on truncation, having read only
// what is there.
func TestHugeLengthUnknownSize(t *testing.T) {
	in := "\x80\x04\x8d\x00\x00\x00\x00\x01\x00\x00\x00" + strings.Repeat("a", 3<<20)
	_, _, err := decodeBytes(t, []byte(in), false)
	if err == nil || !strings.Contains(err.Error(), "pickle offset 2: BINUNICODE8: a string of 4294967296 bytes") {
		t.Fatalf("err = %v", err)
	}
	in = "\x80\x04\x8d\x00\x00\x00\x03\x00\x00\x00\x00" + strings.Repeat("a", 3<<20)
	if _, _, err = decodeBytes(t, []byte(in), false); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("48 MiB declared, 3 MiB there: err = %v", err)
	}
}

// TestStringBudget: strings may total StringBudget of the bytes read; the
// budget is checked before a string is read.
func TestStringBudget(t *testing.T) {
	if StringBudget(0) != 64<<20 || StringBudget(1<<20) != 128<<20 {
		t.Errorf("budget %d, %d", StringBudget(0), StringBudget(1<<20))
	}
	d := NewDecoder(strings.NewReader(""), Options{Stored: func() int64 { return 10 }})
	d.strBytes = StringBudget(10) - 5
	if err := d.reserveString(5); err != nil {
		t.Errorf("within the budget: %v", err)
	}
	if err := d.reserveString(6); err == nil {
		t.Errorf("one byte over the budget accepted")
	}
}

func TestLongDecoding(t *testing.T) {
	cases := []struct {
		b    []byte
		kind Kind
		n    int64
	}{
		{nil, KindInt, 0},
		{[]byte{0xff}, KindInt, -1},
		{[]byte{0x00, 0x80, 0x00}, KindInt, 32768},
		{[]byte{0, 0, 0, 0, 0, 0, 0, 0x80, 0}, KindBigInt, -1 << 63},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, KindInt, 1<<63 - 1},
		{[]byte{0, 0, 0, 0, 0, 0, 0, 0x80}, KindInt, -1 << 63},
		{[]byte{1, 0, 0, 0, 0, 0, 0, 0, 1}, KindBigInt, 1},
	}
	for _, c := range cases {
		v := decodeLong(c.b)
		if v.Kind != c.kind || v.N != c.n {
			t.Errorf("decodeLong(%x) = %v %d, want %v %d", c.b, v.Kind, v.N, c.kind, c.n)
		}
	}
}

func mentionsAny(s, alts string) bool {
	for _, a := range strings.Split(alts, "|") {
		if strings.Contains(s, a) {
			return true
		}
	}
	return false
}

// TestMalformedCorpus: every file of testdata/malformed (see the test
// table above for what each shape is) fails with an error, never a panic,
// whether or not the size is known.
func TestMalformedCorpus(t *testing.T) {
	files, _ := filepath.Glob("testdata/malformed/*.pickle")
	if len(files) < 10 {
		t.Fatalf("found %d malformed files", len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, known := range []bool{true, false} {
			if _, _, err := decodeBytes(t, raw, known); err == nil {
				t.Errorf("%s (size known %v): decoded without error", filepath.Base(f), known)
			}
		}
	}
}

// Nested or unconsumed empty containers, one byte each, are refused at
// MaxStack instead of costing about a hundred bytes of decoder state per
// input byte (a 2 MB file of "]" once took 270 MB; now about 17 MB at most).
func TestStackBounded(t *testing.T) {
	for name, body := range map[string][]byte{
		"empty lists": bytes.Repeat([]byte{opEmptyList}, MaxStack+10),
		"empty dicts": bytes.Repeat([]byte{opEmptyDict}, MaxStack+10),
		"nesting":     bytes.Repeat([]byte{opEmptyList, opMark}, MaxStack+10),
		"marks":       bytes.Repeat([]byte{opMark}, MaxStack+10),
	} {
		b := append(append([]byte{opProto, 2}, body...), opStop)
		for _, known := range []bool{true, false} {
			_, _, err := decodeBytes(t, b, known)
			if err == nil || !strings.Contains(err.Error(), "nesting deeper") {
				t.Errorf("%s (size known %v): %v", name, known, err)
			}
		}
	}
}
