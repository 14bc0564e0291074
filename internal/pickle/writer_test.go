package pickle

import (
	"bytes"
	"fmt"
	"testing"
)

// TestWriterRoundTrip: what Writer writes, the Decoder reads back (ints
// of both widths, memoized strings, nested containers, bools, None).
func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Dict()
	w.Str("segments")
	w.List()
	for _, v := range []int64{0, -5, 1 << 40, 139637976727552} {
		w.Dict()
		w.Str("address")
		w.Int(v)
		w.Str("ok")
		w.Bool(v > 0)
		w.Str("none")
		w.None()
		w.EndDict()
	}
	w.EndList()
	w.EndDict()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d := NewBytesDecoder(buf.Bytes(), Options{})
	v, err := d.Decode()
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.ToAny(v, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(a)
	want := "map[segments:[map[address:0 none:<nil> ok:false] map[address:-5 none:<nil> ok:false] " +
		"map[address:1099511627776 none:<nil> ok:true] map[address:139637976727552 none:<nil> ok:true]]]"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
