package snapshot

import (
	"fmt"

	"github.com/torchmem/torchmem/internal/pickle"
)

// assemble builds the Snapshot from the decoded top-level object: a dict
// (torch >= 2.0) or a bare list of segments (torch 1.13).
func (b *builder) assemble(d *pickle.Decoder, top pickle.Value) error {
	switch top.Kind {
	case pickle.KindList:
		segs, err := b.segmentList(top)
		if err != nil {
			return err
		}
		b.snap.Segments = segs
		b.snap.Format = "1.13"
		return nil
	case pickle.KindDict:
	default:
		return typeErr("the top-level object", top)
	}
	items := b.dec.Items(top)
	for i := 0; i+1 < len(items); i += 2 {
		val := items[i+1]
		var err error
		switch b.keyOf(d, items[i]) {
		case kSegments:
			b.snap.Segments, err = b.segmentList(val)
		case kDeviceTraces:
			b.snap.Traces, err = b.traceLists(val)
		case kAllocatorSettings:
			b.snap.AllocatorSettings, err = settings(d, val)
		case kExternalAnnotations:
			b.snap.Annotations = b.annotations(d, val)
		}
		if err != nil {
			return err
		}
	}
	b.snap.Format = b.format()
	return nil
}

func (b *builder) format() string {
	switch {
	case b.sawTime:
		return "2.2+"
	case b.sawFrame:
		return "2.1"
	}
	return "2.0"
}

func (b *builder) segmentList(v pickle.Value) ([]Segment, error) {
	if v.Kind != pickle.KindList {
		return nil, typeErr("'segments'", v)
	}
	out := make([]Segment, 0, len(b.dec.Items(v)))
	for i, it := range b.dec.Items(v) {
		tag, idx := handleOf(it)
		if tag != tagSegment {
			return nil, fmt.Errorf("snapshot: segment %d is not a segment dict (%s)", i, it.Kind)
		}
		out = append(out, b.segments[idx])
	}
	return out, nil
}

// traceLists turns device_traces into one slice per device: the part of
// the builder's trace a list is a range of (every list PyTorch writes),
// or a copy of the entries it names.
func (b *builder) traceLists(v pickle.Value) ([][]TraceEntry, error) {
	if v.Kind != pickle.KindList {
		return nil, typeErr("'device_traces'", v)
	}
	lists := b.dec.Items(v)
	out := make([][]TraceEntry, 0, len(lists))
	for dev, l := range lists {
		if tag, i := handleOf(l); tag == tagTraces {
			out = append(out, b.traceOf(&b.tracesTaken[i]))
			continue
		}
		if l.Kind != pickle.KindList {
			return nil, typeErr(fmt.Sprintf("device_traces[%d]", dev), l)
		}
		var t traceList // not taken: empty, or not only trace entries
		for _, it := range b.dec.Items(l) {
			if tag, idx := handleOf(it); tag == tagTrace {
				t.add(idx)
			}
		}
		out = append(out, b.traceOf(&t))
	}
	return out, nil
}

func settings(d *pickle.Decoder, v pickle.Value) (map[string]any, error) {
	if v.Kind != pickle.KindDict {
		return nil, nil
	}
	x, err := d.ToAny(v, 16)
	if err != nil {
		return nil, fmt.Errorf("snapshot: allocator_settings: %w", err)
	}
	m, _ := x.(map[string]any)
	return m, nil
}

func (b *builder) annotations(d *pickle.Decoder, v pickle.Value) []Annotation {
	if v.Kind != pickle.KindList {
		return nil
	}
	out := make([]Annotation, 0, len(b.dec.Items(v)))
	for _, it := range b.dec.Items(v) {
		if it.Kind != pickle.KindDict {
			continue
		}
		var a Annotation
		items := b.dec.Items(it)
		for i := 0; i+1 < len(items); i += 2 {
			val := items[i+1]
			switch b.keyOf(d, items[i]) {
			case kStage:
				a.Stage, _ = d.Str(val)
			case kName:
				a.Name, _ = d.Str(val)
			case kDevice:
				a.Device, _ = intOf(val)
			case kTimeUS:
				a.TimeUS, _ = intOf(val)
			}
		}
		out = append(out, a)
	}
	return out
}
