"""Writes small snapshots in the shapes older and newer PyTorch releases
dumped, from the structure their torch/cuda/memory.py and _memory_viz.py
document (no GPU needed). Run: python3 gen.py (from this directory)."""
import pickle

MB = 1 << 20
user = {"filename": "/home/user/train.py", "line": 42, "name": "step"}
lib = {"filename": "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", "line": 114, "name": "forward"}
frames = [lib, user]

# torch 1.13: memory_snapshot() is a bare list of segments; blocks have no
# address and keep requested size and stack in 'history'.
t113 = [
    {"device": 0, "address": 0x7F0000000000, "total_size": 2 * MB, "allocated_size": 1536,
     "active_size": 1536, "stream": 0, "segment_type": "small",
     "blocks": [
         {"size": 1024, "state": "active_allocated",
          "history": [{"addr": 0x7F0000000000, "real_size": 1000, "frames": frames}]},
         {"size": 512, "state": "active_pending_free",
          "history": [{"addr": 0x7F0000000400, "real_size": 512, "frames": frames}]},
         {"size": 2 * MB - 1536, "state": "inactive"},
     ]},
    {"device": 0, "address": 0x7F0000200000, "total_size": 40 * MB, "allocated_size": 30 * MB,
     "active_size": 30 * MB, "stream": 0, "segment_type": "large",
     "blocks": [
         {"size": 30 * MB, "state": "active_allocated",
          "history": [{"addr": 0x7F0000200000, "real_size": 30 * MB - 100, "frames": [user]}]},
         {"size": 10 * MB, "state": "inactive"},
     ]},
]

# torch 2.0: a dict with segments and device_traces; blocks have an address
# and still a history; trace entries have no times.
def seg20(blocks_extra):
    return {"device": 0, "address": 0x7F0000000000, "total_size": 2 * MB, "allocated_size": 1024,
            "active_size": 1024, "stream": 0, "segment_type": "small", "blocks": blocks_extra}

t20 = {
    "segments": [seg20([
        {"address": 0x7F0000000000, "size": 1024, "state": "active_allocated",
         "history": [{"addr": 0x7F0000000000, "real_size": 1000, "frames": frames}]},
        {"address": 0x7F0000000400, "size": 2 * MB - 1024, "state": "inactive", "history": []},
    ])],
    "device_traces": [[
        {"action": "segment_alloc", "addr": 0x7F0000000000, "size": 2 * MB, "stream": 0, "frames": frames},
        {"action": "alloc", "addr": 0x7F0000000400, "size": 2048, "stream": 0, "frames": frames},
        {"action": "alloc", "addr": 0x7F0000000000, "size": 1000, "stream": 0, "frames": frames},
        {"action": "free_requested", "addr": 0x7F0000000400, "size": 2048, "stream": 0, "frames": [user]},
        {"action": "free_completed", "addr": 0x7F0000000400, "size": 2048, "stream": 0, "frames": [user]},
    ]],
}

# torch 2.1: frames and requested_size directly on blocks, no times yet.
t21 = {
    "segments": [{"device": 0, "address": 0x7F0000000000, "total_size": 2 * MB, "allocated_size": 1024,
                  "active_size": 1024, "requested_size": 1000, "stream": 0, "segment_type": "small",
                  "blocks": [
                      {"address": 0x7F0000000000, "size": 1024, "requested_size": 1000,
                       "state": "active_allocated", "frames": frames},
                      {"address": 0x7F0000000400, "size": 2 * MB - 1024, "requested_size": 0,
                       "state": "inactive", "frames": []},
                  ]}],
    "device_traces": [[
        {"action": "segment_alloc", "addr": 0x7F0000000000, "size": 2 * MB, "stream": 0, "frames": frames},
        {"action": "alloc", "addr": 0x7F0000000000, "size": 1000, "stream": 0, "frames": frames},
    ], []],
}

# A future release: keys torchmem does not know, the type-hint spelling
# active_awaiting_free, a host segment, overflow flags, a second device.
future = {
    "segments": [
        {"device": 1, "address": 0x7F1000000000, "total_size": 20 * MB, "allocated_size": 4096,
         "active_size": 4096, "requested_size": 4000, "stream": 7, "segment_type": "large",
         "segment_pool_id": (1, 2), "is_expandable": False, "pool_id": 3, "frames": [],
         "blocks": [
             {"address": 0x7F1000000000, "size": 4096, "requested_size": 4000,
              "state": "active_awaiting_free", "frames": frames, "new_block_key": {"x": [1, 2]}},
             {"address": 0x7F1000001000, "size": 20 * MB - 4096, "requested_size": 0,
              "state": "inactive", "frames": []},
         ]},
        {"device": -1, "address": 0x10000, "total_size": 4096, "allocated_size": 0, "active_size": 0,
         "stream": 0, "segment_type": "host", "blocks": []},
    ],
    "device_traces": [[], [
        {"action": "segment_alloc", "addr": 0x7F1000000000, "size": 20 * MB, "stream": 7,
         "time_us": 1000, "frames": frames, "compile_context": "N/A", "user_metadata": ""},
        {"action": "alloc", "addr": 0x7F1000000000, "size": 4000, "stream": 7, "time_us": 1010,
         "frames": frames, "compile_context": "[0/0]", "user_metadata": "", "overflowed": True},
        {"action": "free_requested", "addr": 0x7F1000000000, "size": 4000, "stream": 7, "time_us": 1020,
         "frames": frames, "compile_context": "[0/0]", "user_metadata": ""},
        {"action": "unknown_future_action", "addr": 0, "size": 0, "stream": 7, "time_us": 1030, "frames": []},
    ]],
    "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128", "max_split_size": 134217728},
    "external_annotations": [{"stage": "START", "name": "fwd", "device": 1, "time_us": 1005},
                             {"stage": "END", "name": "fwd", "device": 1, "time_us": 1025}],
    "trace_overflowed": [False, True],
    "host_allocator": {"segments": []},
}

# Hostile numbers: analyses must neither panic nor allocate by them.
hostile = {
    "segments": [
        {"device": 0, "address": 2**64 - 4096, "total_size": 2**62, "stream": -1, "segment_type": 5,
         "blocks": [{"address": "x", "size": -(2**40), "requested_size": 2**63 - 1, "state": "weird", "frames": [{}]},
                    {"size": 2**62, "state": "active_allocated", "frames": [lib, 7, None]},
                    "not a block"]},
        {"device": 2**40, "total_size": -5, "blocks": []},
    ],
    "device_traces": [[{"action": "free_completed", "addr": 1, "size": -7, "time_us": -1},
                       {"action": "alloc", "addr": 1, "size": 2**62, "time_us": "soon", "frames": "no"},
                       {"action": "oom", "size": 2**63 - 1, "device_free": -1}]],
    "external_annotations": [{"stage": "START", "name": None, "time_us": 2**62}, 5],
    "allocator_settings": [1, 2],
}

entry = {"action": "alloc", "addr": 1, "size": 512, "stream": 0, "time_us": 5, "frames": frames}
shared = {"segments": [], "device_traces": [[entry] * 40000, [entry]]}

for name, obj, proto in [("hostile", hostile, 4), ("shared-entries", shared, 4), ("torch-1.13", t113, 2), ("torch-2.0", t20, 3), ("torch-2.1", t21, 4),
                         ("future", future, 5)]:
    with open(name + ".pickle", "wb") as f:
        pickle.dump(obj, f, protocol=proto)
