"""Writes the decoder's test pickles: each case as NAME.pN.pickle plus
NAME.json holding what json.dumps makes of the same object. Run with any
CPython 3: python3 gen.py (from this directory)."""
import json, pickle

shared = {"name": "forward", "filename": "/x/linear.py", "line": 134}
frames = [shared, {"name": "<module>", "filename": "train.py", "line": 7}]
cases = {
    "scalars": [None, True, False, 0, 1, -1, 255, 256, 65535, 65536, -2**31, 2**31 - 1,
                2**31, 2**40, -2**40, 2**63 - 1, -2**63, 139752229568512, 1.5, -0.0, 1e300,
                "", "x", "é中", "a" * 300],
    "nested": {"segments": [{"blocks": [{"size": 512, "frames": frames}],
                             "pool": (0, 0)}] * 2,
               "traces": [[{"action": "alloc", "frames": frames}, {"action": "free_requested", "frames": frames}]],
               "t": (1,), "t3": (1, 2, 3), "t4": (1, 2, 3, 4), "empty": ((), [], {})},
    "biglist": list(range(2500)),
    "bigdict": {str(i): i for i in range(2500)},
}
for name, obj in cases.items():
    for proto in (2, 3, 4, 5):
        with open(f"{name}.p{proto}.pickle", "wb") as f:
            pickle.dump(obj, f, protocol=proto)
    with open(f"{name}.json", "w") as f:
        json.dump(obj, f, sort_keys=True)
