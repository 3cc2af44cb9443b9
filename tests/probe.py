"""Run a ppo_*.py script in this process and record its host fetches and its compilations, per iteration.

Usage: python probe.py OUT.json SCRIPT.py [script args...]

Every call of a host-fetching method (when the script imports JAX, jax.Array.__array__/block_until_ready/item/tolist
and jax.device_get; when it imports torch, torch.Tensor.item/tolist/cpu/numpy/__bool__/__float__/__int__/__index__;
the probe imports neither framework of its own) is recorded with
the file and line that made it (for torch, with the tensor's device type), and whether it was made inside another
recorded call (jax.device_get reads every leaf through __array__). The script's one fetch per iteration (`.tolist()` or `jax.device_get` in the script itself) marks
the iteration boundaries: at each, the number of JAX compilations so far (the "Compiling ..." records that JAX logs for
every function it lowers) and, for torch, of dynamo compilations so far is recorded, and so are the JAX arrays each of
the script's global names holds: at the next boundary, how many of them the iteration in between deleted (a donated
array is deleted when the call it is donated to starts). OUT.json gets the fetches, both boundary lists, the
donations, the name of every JAX compilation and, for torch, every dynamo compilation
(`torch._dynamo.utils.get_compilation_metrics()`) and dynamo's graph-break counter. It also records the
compiled entry points: every jax.jit, eqx.filter_jit, nnx.jit and nnx.jit_partial given one of the script's functions
(bound with functools.partial) as [function, "jax.jit" | "eqx.filter_jit" | NNX graph mode], the objects each
nnx.cached_partial / nnx.jit_partial binds ("Agent+Optimizer") and how often each bound function is called, and the
calls into NNX's graph machinery (flax/nnx/graphlib.py: graph traversal, flatten/unflatten, caches) made inside the
NNX entry points' calls after iteration 0. The script runs as `__main__` and writes its logs as in a plain run, so the
same run serves every check of its output.
"""
import collections
import cProfile
import functools
import json
import logging
import os
import re
import runpy
import sys

out_path, script = sys.argv[1], os.path.abspath(sys.argv[2])
with open(script) as source:
    source_text = source.read()
uses_torch = re.search(r"^import torch$", source_text, flags=re.M) is not None
uses_jax = re.search(r"^import jax$", source_text, flags=re.M) is not None  # the probe imports no framework of its own
if uses_jax:
    import jax
    from jax._src.array import ArrayImpl
fetches, boundaries, jax_boundaries, jax_compilations, depth = [], [], [], [], [0]
held, donations = [], []  # the arrays the training loop's names held at the last boundary; per later boundary, deleted
jitted, bound, bound_calls, graph_profile, nnx_depth = [], [], collections.Counter(), cProfile.Profile(), [0]


class CompileLog(logging.Handler):
    """Collects the name of every function JAX logs as compiling (jax_log_compiles)."""

    def emit(self, record):
        message = record.getMessage()
        if message.startswith("Compiling "):
            jax_compilations.append(message.split()[1])


def dynamo_compilations():
    return len(torch._dynamo.utils.get_compilation_metrics()) if uses_torch else 0


def at_boundary(caller, name):
    """The script's own per-iteration fetch: `.tolist()` (torch) or `jax.device_get` (JAX) in its training loop, main()
    (a fetch inside one of its other functions, such as the Gymnasium scripts' per-step actions, is no boundary)."""
    return caller.f_code.co_filename == script and caller.f_code.co_name in ("<module>", "main") and name in (
        "tolist", "device_get")


def record_donations(namespace):
    """For each global name that held live arrays at the last boundary: [how many are deleted now, how many it held];
    then remember what each holds now."""
    if held:
        donations.append({name: [sum(a.is_deleted() for a in arrays), len(arrays)] for name, arrays in held[0].items()})
    now = {}
    for name, value in namespace.items():
        arrays = [leaf for leaf in jax.tree.leaves(value) if isinstance(leaf, ArrayImpl) and not leaf.is_deleted()]
        if arrays:
            now[name] = arrays
    held[:] = [now]


def recording(owner, name, label):
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        caller = sys._getframe(1)
        fetch = {"method": label, "file": caller.f_code.co_filename, "line": caller.f_lineno, "nested": depth[0] > 0}
        if label.startswith("torch."):  # a CPU tensor's numpy() is a view, a CUDA tensor's a copy and a host sync
            fetch["device"] = args[0].device.type
        fetches.append(fetch)
        if at_boundary(caller, name):
            boundaries.append(dynamo_compilations())
            jax_boundaries.append(len(jax_compilations))
            if uses_jax:
                record_donations(caller.f_locals)  # the training loop's names: main()'s locals, or the module's globals
        depth[0] += 1
        try:
            return original(*args, **kwargs)
        finally:
            depth[0] -= 1

    setattr(owner, name, wrapper)


def entry_point(owner, name, label):
    """Record the script's functions `owner.name` compiles: [function name, label] (label(kwargs) when callable)."""
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        fun = args[0] if args else kwargs.get("fun")
        if isinstance(fun, functools.partial):
            jitted.append([fun.func.__name__, label(kwargs) if callable(label) else label])
        return original(*args, **kwargs)

    setattr(owner, name, wrapper)


def graph_profiled(fun):
    """`fun`, its calls after iteration 0 profiled (not those it makes to itself)."""

    def call(*args, **kwargs):
        nnx_depth[0] += 1
        if nnx_depth[0] == 1 and jax_boundaries:
            graph_profile.enable()
        try:
            return fun(*args, **kwargs)
        finally:
            nnx_depth[0] -= 1
            if nnx_depth[0] == 0:
                graph_profile.disable()

    return call


def binding(owner, name):
    """Record the objects `owner.name` (nnx.cached_partial, nnx.jit_partial) binds; count the bound function's calls."""
    original = getattr(owner, name)

    def wrapper(fun, *objects, **kwargs):
        key = "+".join(type(obj).__name__ for obj in objects)
        bound.append(key)
        bound_fun = original(fun, *objects, **kwargs)

        def call(*args):
            bound_calls[key] += 1
            return bound_fun(*args)

        return graph_profiled(call)

    setattr(owner, name, wrapper)


def graph_mode(kwargs):
    return nnx.set_graph_mode.current_value() if kwargs.get("graph") is None else kwargs["graph"]


def nnx_jit(fun, **kwargs):
    return graph_profiled(real_nnx_jit(fun, **kwargs))


if uses_jax:
    jax.config.update("jax_log_compiles", True)
    logging.getLogger("jax").addHandler(CompileLog())
if uses_torch:
    import torch
    import torch._dynamo.utils

    for name in ("item", "tolist", "cpu", "numpy", "__bool__", "__float__", "__int__", "__index__"):
        recording(torch.Tensor, name, f"torch.Tensor.{name}")
if uses_jax:
    for name in ("__array__", "block_until_ready", "item", "tolist"):
        recording(ArrayImpl, name, f"jax.Array.{name}")
    recording(jax, "device_get", "jax.device_get")
if re.search(r"^import equinox as eqx$", source_text, flags=re.M):
    import equinox as eqx

    entry_point(eqx, "filter_jit", "eqx.filter_jit")
if re.search(r"^from flax import nnx$", source_text, flags=re.M):
    from flax import nnx

    real_nnx_jit = nnx.jit
    nnx.jit = nnx_jit
    entry_point(nnx, "jit", graph_mode)
    binding(nnx, "cached_partial")
    binding(nnx, "jit_partial")
    entry_point(nnx, "jit_partial", graph_mode)
if uses_jax:
    entry_point(jax, "jit", "jax.jit")  # after Equinox and Flax are imported: what they bind at import is theirs

sys.argv = sys.argv[2:]
try:
    runpy.run_path(script, run_name="__main__")
finally:
    record = {"fetches": fetches, "boundaries": boundaries, "jax_boundaries": jax_boundaries,
              "donations": donations, "jax_compilations": jax_compilations, "jitted": jitted, "bound": bound,
              "bound_calls": bound_calls}
    graph_profile.create_stats()
    graphlib = os.path.join("flax", "nnx", "graphlib.py")
    record["graph_calls_after_iteration_0"] = sum(
        stat[1] for (path, _, _), stat in graph_profile.stats.items() if path.endswith(graphlib))
    if uses_torch:
        record["compilations"] = [
            {"compile_id": m.compile_id, "co_name": m.co_name, "co_filename": m.co_filename,
             "graph_op_count": m.graph_op_count, "fail_type": m.fail_type,
             "seconds": m.entire_frame_compile_time_s}
            for m in torch._dynamo.utils.get_compilation_metrics()
        ]
        record["graph_breaks"] = dict(torch._dynamo.utils.counters["graph_break"])
    with open(out_path, "w") as f:
        json.dump(record, f, indent=1)
