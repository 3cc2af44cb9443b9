"""Probe every script's command line in this one process: what a fresh process per script would show, at one import
of JAX and torch instead of one per script.

Usage: python cli_probe.py < CASES.json, where CASES maps each script's path to
  {"frameworks": "jax" | "torch" | "torch+jax", "bad_argvs": [argv, ...], "boundary_argv": argv,
   "command_lines": [{"argv": argv, "skip_on_gpu": bool}, ...], "pinned_mode": true | false | null}.
For each script it loads the script as a module and records check_args's reason for every bad argv (parsed by tyro
as the CLI would) and for the boundary argv, the memory helpers on stand-in devices, then runs the script as
`__main__` on each command line with file descriptor 2 sent to a file (so that what C++ code writes there is caught
too), recording the exit status and everything written to stderr (a command line marked "skip_on_gpu" is not run where
JAX or torch sees a GPU: {"skipped": true}). With "pinned_mode", it then flips Flax's NNX
defaults to the other mode and loads the script again: the script must set its mode itself. Prints
{script: report} as JSON on stdout.
"""
import contextlib
import importlib.util
import io
import json
import os
import runpy
import sys
import tempfile
import types

import flax
import tyro
from flax import nnx


def load(script: str, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def peaks(module, frameworks: str) -> list:
    """peak_device_bytes on a stand-in GPU (JAX reports 1000 bytes, torch 500) and on the script's CPU device."""
    jax_gpu = types.SimpleNamespace(memory_stats=lambda: {"peak_bytes_in_use": 1000})
    if frameworks == "jax":
        return [module.peak_device_bytes(jax_gpu), module.peak_device_bytes(module.select_device("cpu"))]
    module.torch.cuda.max_memory_allocated = lambda device: 500
    cpu, cuda = module.torch.device("cpu"), module.torch.device("cuda")
    if frameworks == "torch+jax":
        return [module.peak_device_bytes(jax_gpu, cpu), module.peak_device_bytes(jax_gpu, cuda),
                module.peak_device_bytes(*module.select_device("cpu"))]
    return [module.peak_device_bytes(cpu), module.peak_device_bytes(cuda),
            module.peak_device_bytes(module.select_device("cpu"))]


def run_as_main(script: str, argv: list) -> dict:
    """The script as `__main__` on `argv`: its exit status (None: it returned) and what it wrote to stderr (its
    stdout, kept apart as in a process of its own, is dropped)."""
    sys.argv, status = [script, *argv], None
    with tempfile.TemporaryFile("w+") as captured, contextlib.redirect_stdout(io.StringIO()):
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as exit:
            status = exit.code
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        return {"status": status, "stderr": captured.read()}


def gpu_present() -> bool:
    import jax

    torch = sys.modules.get("torch")
    return any(device.platform == "gpu" for device in jax.devices()) or bool(torch and torch.cuda.is_available())


def pinned_mode(script: str, pinned: bool) -> list:
    """Flax's NNX mode flags after the script is loaded with the other mode as Flax's default."""
    flax.config.update("nnx_graph_mode", not pinned)
    flax.config.update("nnx_graph_updates", not pinned)
    load(script, "pinned")
    return [flax.config.nnx_graph_mode, flax.config.nnx_graph_updates,
            nnx.set_graph_mode.current_value(), nnx.set_graph_updates.current_value()]


def probe(script: str, case: dict) -> dict:
    module = load(script, "probed")
    report = {"reasons": [module.check_args(tyro.cli(module.Args, args=argv)) for argv in case["bad_argvs"]]}
    report["boundary"] = module.check_args(tyro.cli(module.Args, args=case["boundary_argv"]))
    report["peaks"] = peaks(module, case["frameworks"])
    report["peak_rss_bytes_before"] = module.peak_rss_bytes()
    with open("/proc/self/status") as status:
        report["vm_hwm_kib"] = int(next(line for line in status if line.startswith("VmHWM:")).split()[1])
    report["peak_rss_bytes"] = module.peak_rss_bytes()
    report["command_lines"] = [
        {"skipped": True} if line["skip_on_gpu"] and gpu_present() else run_as_main(script, line["argv"])
        for line in case["command_lines"]
    ]
    if case["pinned_mode"] is not None:
        report["pinned_mode"] = pinned_mode(script, case["pinned_mode"])
    return report


if __name__ == "__main__":
    cases = json.load(sys.stdin)
    with contextlib.redirect_stdout(sys.stderr):  # only the report on stdout
        reports = {script: probe(script, case) for script, case in cases.items()}
    print(json.dumps(reports), flush=True)
