package models

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"
)

// TestReliabilityTruncatedSafetensorsHeader: a file that claims a 100 MiB
// header but holds a few bytes is refused without allocating the 100 MiB
// (before, every fuzz input with a mutated length allocated it).
func TestReliabilityTruncatedSafetensorsHeader(t *testing.T) {
	b := binary.LittleEndian.AppendUint64(nil, MaxHeaderBytes)
	b = append(b, `{"a":`...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ParseSafetensorsHeader(bytes.NewReader(b))
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("RELIABILITY|%s|%s|%s", "safetensors header truncated after 5 of 100 MiB", "error, < 1 MiB allocated",
		fmt.Sprintf("error %v, %d KiB allocated", err != nil, alloc>>10))
	if err == nil || alloc > 1<<20 {
		t.Errorf("err %v, allocated %d bytes", err, alloc)
	}
}

// TestReliabilityIndexShardSlash: filepath.Base("/") is "/", so a shard
// named "/" passed the check (found by FuzzParseIndex).
func TestReliabilityIndexShardSlash(t *testing.T) {
	var got []string
	for _, shard := range []string{"/", "a/b", "..", "."} {
		_, err := parseIndex([]byte(`{"weight_map":{"w":"` + shard + `"}}`))
		got = append(got, fmt.Sprintf("%q refused %v", shard, err != nil))
		if err == nil {
			t.Errorf("shard %q accepted", shard)
		}
	}
	t.Logf("RELIABILITY|%s|%s|%v", "safetensors index shard outside its directory", "refused: / a/b .. .", got)
}
