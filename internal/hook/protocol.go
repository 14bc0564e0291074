package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// One line of the wire format, as the embedded Python hook writes it:
//
//	{"v":1,"type":"hello","pid":4242,"ppid":4200,"rank":0,"local_rank":0,"world_size":2,"worker":false,"torch":"2.11.0+cu130","cuda":"13.0","python":"3.12.3"}
//	{"v":1,"type":"stats","t":1764455503.25,"step":120,"cuda_initialized":true,"devices":[{"device":0,"allocated":1582062080,"reserved":3435134976,...}]}
//	{"v":1,"type":"step","t":1764455503.31,"step":121,"steps":1,"step_seconds":0.061,"cuda_initialized":true,"devices":[...],"step_peaks":[{"device":0,"allocated":3331836416,"reserved":3435134976}]}
//	{"v":1,"type":"oom","t":...,"device":0,"alloc":400000286720,"device_alloc":150109880320,"device_free":147061866496,"snapshot":"/run/.../oom-4242-1.pickle"}
//	{"v":1,"type":"exception","t":...,"exc_type":"torch.cuda.OutOfMemoryError","oom":true,"text":"Traceback ..."}
//	{"v":1,"type":"ack","id":7,"cmd":"cleanup","ok":true,"freed":1073741824,"gc_collected":5120,"gc_uncollectable":0,"host_freed":224395264,"trim_freed":223346688}
//	{"v":1,"type":"cycle","t":...,"generation":0,"objects":4,"tensors":1,"tensor_bytes":4194304,"types":[{"type":"__main__.Node","count":1},...],"tensor_list":[{"bytes":4194304,"shape":[1024,1024],"dtype":"torch.float32","device":"cpu"}],"lines":["train.py:12"],"report":1,"step":40}
//	{"v":1,"type":"bye","t":...,"step":500}
//
// Commands go the other way, one JSON line each:
//
//	{"v":1,"type":"cleanup","id":7}
//	{"v":1,"type":"snapshot","id":8,"path":"/var/tmp/job.pickle"}
//	{"v":1,"type":"reset_peaks","id":9}

// ProtocolVersion is the "v" field of every line in both directions. A line
// with a higher version is still decoded (unknown fields are ignored); a line
// without one is rejected.
const ProtocolVersion = 1

// MaxLineBytes bounds one protocol line; longer lines are dropped. The hook
// truncates exception text well below this.
const MaxLineBytes = 1 << 20

// Message types sent by hooked processes.
const (
	TypeHello     = "hello"
	TypeStats     = "stats"
	TypeStep      = "step"
	TypeOOM       = "oom"
	TypeException = "exception"
	TypeAck       = "ack"
	TypeNotice    = "notice"
	TypeBye       = "bye"
	TypeCycle     = "cycle" // with --detect-cycles
	// TypeDisconnect is synthesised by the server when a connection ends;
	// it never appears on the wire.
	TypeDisconnect = "disconnect"
)

// Command types sent by the server.
const (
	CmdCleanup    = "cleanup"
	CmdSnapshot   = "snapshot"
	CmdResetPeaks = "reset_peaks"
)

// Peer is the process on the other end of a connection, from SO_PEERCRED
// (kernel-verified, not what the process claims about itself).
type Peer struct {
	PID int `json:"pid"`
	UID int `json:"uid"`
	GID int `json:"gid"`
}

// Message is one decoded line from a hooked process. Exactly one of the
// typed pointers is set, matching Type; Raw keeps the original line
// (ParseLine's result; the Server does not keep it).
type Message struct {
	Peer     Peer      `json:"peer"`
	Received time.Time `json:"received"`
	Type     string    `json:"type"`
	Version  int       `json:"v"`

	Hello     *Hello     `json:"hello,omitempty"`
	Stats     *Stats     `json:"stats,omitempty"` // TypeStats and TypeStep
	OOM       *OOM       `json:"oom,omitempty"`
	Exception *Exception `json:"exception,omitempty"`
	Ack       *Ack       `json:"ack,omitempty"`
	Notice    *Notice    `json:"notice,omitempty"`
	Bye       *Bye       `json:"bye,omitempty"`
	Cycle     *Cycle     `json:"cycle,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// Hello is the first message of each hooked process that imported torch.
// Rank fields come from the launcher's environment (RANK, LOCAL_RANK,
// WORLD_SIZE as torchrun sets them) and are nil when not set.
type Hello struct {
	PID       int  `json:"pid"`
	PPID      int  `json:"ppid"`
	Rank      *int `json:"rank,omitempty"`
	LocalRank *int `json:"local_rank,omitempty"`
	WorldSize *int `json:"world_size,omitempty"`
	// Worker is true for a DataLoader worker (torch.utils.data.get_worker_info()
	// was set); workers never send allocator stats.
	Worker   bool `json:"worker"`
	WorkerID *int `json:"worker_id,omitempty"`
	// Child is true when the process was started by multiprocessing (fork,
	// spawn or forkserver) of another hooked process.
	Child bool `json:"child,omitempty"`
	// Launcher is true for torchrun / python -m torch.distributed.run
	// itself: it imports torch but trains nothing.
	Launcher        bool     `json:"launcher,omitempty"`
	Torch           string   `json:"torch"`
	CUDA            string   `json:"cuda,omitempty"` // torch.version.cuda; empty for CPU builds
	Python          string   `json:"python"`
	Argv            []string `json:"argv,omitempty"`
	StepHook        string   `json:"step_hook"` // "global" (torch >= 2.0), "wrapped" (older), or "none"
	RecordHistory   bool     `json:"record_history"`
	HookVersion     int      `json:"hook_version"`
	CUDAInitialized bool     `json:"cuda_initialized"`
}

// Stats is an allocator sample: the periodic tick (TypeStats) or the one
// taken right after an optimizer step (TypeStep). Devices is empty while
// the process has not initialised CUDA (the hook never initialises it).
type Stats struct {
	Time float64 `json:"t"` // Unix seconds, process clock
	Step *int64  `json:"step,omitempty"`
	// Steps is how many optimizer steps this message covers: step messages
	// are rate-limited, so one message may stand for several steps.
	Steps           int64         `json:"steps,omitempty"`
	StepSeconds     *float64      `json:"step_seconds,omitempty"` // mean step time over Steps
	CUDAInitialized bool          `json:"cuda_initialized"`
	Devices         []DeviceStats `json:"devices,omitempty"`
	// StepPeaks (step messages only) are the measured peaks of the steps
	// the message covers, per device: at each optimizer step the hook
	// reads the allocator's peaks and resets them. Absent before CUDA is
	// initialised, without CUDA, or with step peaks off.
	StepPeaks []StepPeak `json:"step_peaks,omitempty"`
}

// StepPeak is the highest allocated and reserved bytes on one device over
// the steps of a step message: torch.cuda.max_memory_allocated and
// max_memory_reserved read at each step's end, then reset.
type StepPeak struct {
	Device    int   `json:"device"`
	Allocated int64 `json:"allocated"`
	Reserved  int64 `json:"reserved"`
}

// DeviceStats are the essentials of torch.cuda.memory_stats(device), bytes
// and counts as the caching allocator reports them.
type DeviceStats struct {
	Device              int   `json:"device"`
	Allocated           int64 `json:"allocated"`             // allocated_bytes.all.current
	Reserved            int64 `json:"reserved"`              // reserved_bytes.all.current
	Active              int64 `json:"active"`                // active_bytes.all.current
	InactiveSplit       int64 `json:"inactive_split"`        // inactive_split_bytes.all.current
	PeakAllocated       int64 `json:"peak_allocated"`        // allocated_bytes.all.peak
	PeakReserved        int64 `json:"peak_reserved"`         // reserved_bytes.all.peak
	PeakActive          int64 `json:"peak_active"`           // active_bytes.all.peak
	NumAllocRetries     int64 `json:"num_alloc_retries"`     // num_alloc_retries
	NumOOMs             int64 `json:"num_ooms"`              // num_ooms
	NumDeviceAlloc      int64 `json:"num_device_alloc"`      // num_device_alloc (cudaMalloc calls)
	NumDeviceFree       int64 `json:"num_device_free"`       // num_device_free
	InactiveSplitBlocks int64 `json:"inactive_split_blocks"` // inactive_split.all.current
}

// OOM is what the allocator's OOM observer saw
// (torch._C._cuda_attach_out_of_memory_observer: device, requested bytes,
// bytes the allocator holds on the device, bytes free on the device), plus
// the allocator stats at that moment and the snapshot dumped while the
// tensors were still alive, when history recording was on.
type OOM struct {
	Time        float64      `json:"t"`
	Device      int          `json:"device"`
	Alloc       int64        `json:"alloc"`        // bytes requested
	DeviceAlloc int64        `json:"device_alloc"` // bytes allocated by the allocator on the device
	DeviceFree  int64        `json:"device_free"`  // bytes free on the device (cudaMemGetInfo)
	Step        *int64       `json:"step,omitempty"`
	Stats       *DeviceStats `json:"stats,omitempty"`
	Snapshot    string       `json:"snapshot,omitempty"`       // path of the dumped snapshot
	SnapshotErr string       `json:"snapshot_error,omitempty"` // why no snapshot was dumped
}

// Exception is an uncaught exception in the main thread (sys.excepthook)
// or another thread (threading.excepthook). Text is the formatted
// traceback, truncated to 64 KiB.
type Exception struct {
	Time    float64 `json:"t"`
	ExcType string  `json:"exc_type"`
	OOM     bool    `json:"oom"` // CUDA/host out-of-memory error
	Thread  string  `json:"thread,omitempty"`
	Text    string  `json:"text"`
	Step    *int64  `json:"step,omitempty"`
}

// Ack answers a command by its ID.
type Ack struct {
	ID    int64  `json:"id"`
	Cmd   string `json:"cmd"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Freed is reserved bytes released by cleanup (sum over devices).
	Freed *int64 `json:"freed,omitempty"`
	// GCCollected and GCUncollectable are what cleanup's gc.collect() found
	// (gc.get_stats() before and after).
	GCCollected     *int64 `json:"gc_collected,omitempty"`
	GCUncollectable *int64 `json:"gc_uncollectable,omitempty"`
	// HostFreed is the fall in the process's resident bytes
	// (/proc/self/statm) over the whole cleanup; TrimFreed over glibc's
	// malloc_trim(0) alone (nil without glibc).
	HostFreed *int64 `json:"host_freed,omitempty"`
	TrimFreed *int64 `json:"trim_freed,omitempty"`
	Path      string `json:"path,omitempty"` // snapshot written
}

// Notice is the hook saying it degraded (e.g. history recording not
// available in this torch); the supervisor shows it once.
type Notice struct {
	Text string `json:"text"`
}

// Bye is sent at interpreter exit (atexit) with the last step number.
type Bye struct {
	Time float64 `json:"t"`
	Step *int64  `json:"step,omitempty"`
}

// Cycle is a reference cycle that held tensors when the garbage
// collector freed it (--detect-cycles): the cycle's objects by type, its
// tensors, and the lines that created them when tracemalloc traced them.
type Cycle struct {
	Time        float64       `json:"t"`
	Generation  int           `json:"generation"` // the collection's generation
	Objects     int           `json:"objects"`
	Tensors     int           `json:"tensors"`
	TensorBytes int64         `json:"tensor_bytes"` // element_size * nelement, summed
	Types       []TypeCount   `json:"types"`        // most common first, at most 10
	TensorList  []CycleTensor `json:"tensor_list,omitempty"`
	Lines       []string      `json:"lines,omitempty"` // "file:line", innermost frame outside torch
	Report      int           `json:"report"`          // 1.. in this process
	Step        *int64        `json:"step,omitempty"`
}

// TypeCount is how many objects of one type a cycle held.
type TypeCount struct {
	Type  string `json:"type"`
	Count int    `json:"count"`
}

// CycleTensor describes one tensor a cycle held.
type CycleTensor struct {
	Bytes  int64   `json:"bytes"`
	Shape  []int64 `json:"shape,omitempty"`
	DType  string  `json:"dtype,omitempty"`
	Device string  `json:"device,omitempty"`
}

// Command is a request to one hooked process.
type Command struct {
	Type string `json:"type"` // CmdCleanup, CmdSnapshot, CmdResetPeaks
	ID   int64  `json:"id"`   // echoed in the Ack; the server assigns one when 0
	Path string `json:"path,omitempty"`
}

// ErrBadLine is wrapped by ParseLine for lines that are not protocol messages.
var ErrBadLine = errors.New("bad hook protocol line")

// ParseLine decodes one wire line. It never panics on hostile input; an
// unknown type is returned with only Type and Raw set so newer hooks work
// with older servers.
func ParseLine(line []byte) (Message, error) {
	var head struct {
		V    *int   `json:"v"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return Message{}, fmt.Errorf("%w: %v", ErrBadLine, err)
	}
	if head.V == nil || *head.V < 1 {
		return Message{}, fmt.Errorf("%w: missing or invalid version field \"v\"", ErrBadLine)
	}
	m := Message{Type: head.Type, Version: *head.V, Raw: append(json.RawMessage(nil), line...)}
	var target any
	switch head.Type {
	case TypeHello:
		m.Hello = &Hello{}
		target = m.Hello
	case TypeStats, TypeStep:
		m.Stats = &Stats{}
		target = m.Stats
	case TypeOOM:
		m.OOM = &OOM{}
		target = m.OOM
	case TypeException:
		m.Exception = &Exception{}
		target = m.Exception
	case TypeAck:
		m.Ack = &Ack{}
		target = m.Ack
	case TypeNotice:
		m.Notice = &Notice{}
		target = m.Notice
	case TypeBye:
		m.Bye = &Bye{}
		target = m.Bye
	case TypeCycle:
		m.Cycle = &Cycle{}
		target = m.Cycle
	case "":
		return Message{}, fmt.Errorf("%w: missing \"type\"", ErrBadLine)
	default:
		return m, nil
	}
	if err := json.Unmarshal(line, target); err != nil {
		return Message{}, fmt.Errorf("%w: %s: %v", ErrBadLine, head.Type, err)
	}
	return m, nil
}

// EncodeCommand renders a command as one wire line (with the newline).
func EncodeCommand(c Command) ([]byte, error) {
	switch c.Type {
	case CmdCleanup, CmdResetPeaks:
	case CmdSnapshot:
		if c.Path == "" {
			return nil, errors.New("snapshot command needs a path")
		}
	default:
		return nil, fmt.Errorf("unknown hook command %q", c.Type)
	}
	b, err := json.Marshal(struct {
		V int `json:"v"`
		Command
	}{ProtocolVersion, c})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
