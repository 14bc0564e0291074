package snapshot

import "github.com/torchmem/torchmem/internal/pickle"

// key codes of the dict keys the builder understands; others are ignored.
type key uint8

const (
	kOther key = iota
	kAction
	kAddr
	kAddress
	kSize
	kStream
	kTimeUS
	kFrames
	kDeviceFree
	kCompileContext
	kState
	kRequestedSize
	kHistory
	kRealSize
	kBlocks
	kDevice
	kTotalSize
	kAllocatedSize
	kActiveSize
	kSegmentType
	kPoolID
	kIsExpandable
	kName
	kFilename
	kLine
	kSegments
	kDeviceTraces
	kAllocatorSettings
	kExternalAnnotations
	kStage
	kUserMetadata
)

var keyNames = map[string]key{
	"action": kAction, "addr": kAddr, "address": kAddress, "size": kSize,
	"stream": kStream, "time_us": kTimeUS, "frames": kFrames,
	"device_free": kDeviceFree, "compile_context": kCompileContext,
	"state": kState, "requested_size": kRequestedSize, "history": kHistory,
	"real_size": kRealSize, "blocks": kBlocks, "device": kDevice,
	"total_size": kTotalSize, "allocated_size": kAllocatedSize,
	"active_size": kActiveSize, "segment_type": kSegmentType,
	"segment_pool_id": kPoolID, "is_expandable": kIsExpandable,
	"name": kName, "filename": kFilename, "line": kLine,
	"segments": kSegments, "device_traces": kDeviceTraces,
	"allocator_settings":   kAllocatorSettings,
	"external_annotations": kExternalAnnotations, "stage": kStage,
	"user_metadata": kUserMetadata,
}

type keySet uint64

func (s keySet) has(k key) bool { return s&(1<<k) != 0 }

// keyOf classifies a dict key, caching by the decoder's string index
// because snapshots repeat the same memoized key strings millions of times.
func (b *builder) keyOf(d *pickle.Decoder, v pickle.Value) key {
	if v.Kind != pickle.KindString {
		return kOther
	}
	i := int(v.N)
	if i < len(b.keys) && b.keys[i] != 0 {
		return b.keys[i] - 1
	}
	for len(b.keys) <= i {
		b.keys = append(b.keys, 0)
	}
	s, _ := d.Str(v)
	k := keyNames[s]
	b.keys[i] = k + 1
	return k
}
