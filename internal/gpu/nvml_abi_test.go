package gpu

import (
	"reflect"
	"testing"
)

func TestDecodeMemoryV2FieldOrder(t *testing.T) {
	b := make([]byte, memV2Size)
	ne.PutUint32(b[0:], memV2Version)
	ne.PutUint64(b[8:], 150754820096)  // total
	ne.PutUint64(b[16:], 644939776)    // reserved
	ne.PutUint64(b[24:], 145793089536) // free
	ne.PutUint64(b[32:], 4316790784)   // used
	m, err := decodeMemoryV2(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Total != 150754820096 || *m.Reserved != 644939776 || m.Free != 145793089536 || m.Used != 4316790784 {
		t.Errorf("%+v", m)
	}
	if memV2Version != 0x02000028 {
		t.Errorf("nvmlMemory_v2 version = %#x", memV2Version)
	}
	if _, err := decodeMemoryV2(b[:39]); err == nil {
		t.Error("short buffer accepted")
	}
}

func TestDecodeProcesses(t *testing.T) {
	for _, stride := range []int{procV1Size, procV2Size} {
		b := make([]byte, 2*stride)
		ne.PutUint32(b[0:], 517)
		ne.PutUint64(b[8:], 4307550208)
		ne.PutUint32(b[stride:], 4242)
		ne.PutUint64(b[stride+8:], nvmlValueNotAvailable)
		got, err := decodeProcesses(b, 2, stride)
		if err != nil {
			t.Fatal(err)
		}
		want := []rawProcess{{517, 4307550208}, {4242, nvmlValueNotAvailable}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("stride %d: %+v", stride, got)
		}
		if usedPtr(got[1].Used) != nil || *usedPtr(got[0].Used) != 4307550208 {
			t.Error("usedPtr")
		}
	}
	if _, err := decodeProcesses(make([]byte, 24), 2, procV2Size); err == nil {
		t.Error("overrun accepted")
	}
	if _, err := decodeProcesses(make([]byte, 24), 1, 20); err == nil {
		t.Error("bad stride accepted")
	}
}

func TestSmallConversions(t *testing.T) {
	if got := cpusFromWords([]uint64{65535, 0, 0, 0}); !reflect.DeepEqual(got, seq(0, 15)) {
		t.Errorf("cpusFromWords = %v", got)
	}
	if got := cpusFromWords([]uint64{1, 1 << 63}); !reflect.DeepEqual(got, []int{0, 127}) {
		t.Errorf("cpusFromWords = %v", got)
	}
	for v, want := range map[int32]string{13000: "13.0", 12040: "12.4", 11080: "11.8", 0: ""} {
		if got := cudaVersionString(v); got != want {
			t.Errorf("cudaVersionString(%d) = %q", v, got)
		}
	}
	for in, want := range map[string]string{"00000000:00:06.0": "0000:00:06.0", "00000000:3B:00.0": "0000:3b:00.0", "0000:af:00.0": "0000:af:00.0"} {
		if got := sysfsBusID(in); got != want {
			t.Errorf("sysfsBusID(%q) = %q", in, got)
		}
	}
	if cString([]byte("abc\x00def")) != "abc" || cString([]byte("abc")) != "abc" {
		t.Error("cString")
	}
}
