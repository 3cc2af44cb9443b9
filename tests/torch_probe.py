"""Run a torch script in this process and record its host fetches and its torch.compile work, per iteration.

Usage: python torch_probe.py OUT.json SCRIPT.py [script args...]

Every call of a host-fetching method (torch.Tensor.item/tolist/cpu/numpy/__bool__/__float__/__int__/__index__,
jax.Array.__array__/block_until_ready/item/tolist, jax.device_get) is recorded with the file and line that made it.
The script's one fetch per iteration (`.tolist()` in the script itself) marks the iteration boundaries: at each, the
number of dynamo compilations so far is recorded. OUT.json gets the fetches, the boundaries, every compilation
(`torch._dynamo.utils.get_compilation_metrics()`) and dynamo's graph-break counter.
"""
import json
import os
import runpy
import sys

import jax
import torch
import torch._dynamo.utils
from jax._src.array import ArrayImpl

out_path, script = sys.argv[1], os.path.abspath(sys.argv[2])
fetches, boundaries = [], []


def recording(owner, name, label):
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        caller = sys._getframe(1)
        fetches.append({"method": label, "file": caller.f_code.co_filename, "line": caller.f_lineno})
        if caller.f_code.co_filename == script and name == "tolist":
            boundaries.append(len(torch._dynamo.utils.get_compilation_metrics()))
        return original(*args, **kwargs)

    setattr(owner, name, wrapper)


for name in ("item", "tolist", "cpu", "numpy", "__bool__", "__float__", "__int__", "__index__"):
    recording(torch.Tensor, name, f"torch.Tensor.{name}")
for name in ("__array__", "block_until_ready", "item", "tolist"):
    recording(ArrayImpl, name, f"jax.Array.{name}")
recording(jax, "device_get", "jax.device_get")

sys.argv = sys.argv[2:]
try:
    runpy.run_path(script, run_name="__main__")
finally:
    compilations = [
        {"compile_id": m.compile_id, "co_name": m.co_name, "co_filename": m.co_filename,
         "graph_op_count": m.graph_op_count, "fail_type": m.fail_type,
         "seconds": m.entire_frame_compile_time_s}
        for m in torch._dynamo.utils.get_compilation_metrics()
    ]
    graph_breaks = dict(torch._dynamo.utils.counters["graph_break"])
    with open(out_path, "w") as f:
        json.dump({"fetches": fetches, "boundaries": boundaries, "compilations": compilations,
                   "graph_breaks": graph_breaks}, f, indent=1)
