"""What a sweep records besides its runs, and what it checks before and after them: system.json (the machine),
env_timing.json (how costly each env is to step, in the benchmark's own regime), workload.json, whether a run
finished (its event file holds time/total), and whether this Python can import what the scripts import.

env_timing.json measures every env with `num_envs` environments stepped by `jax.vmap(env.step)` inside a
`jax.lax.scan` of `num_steps` steps under `jax.jit`, random actions, one warm-up call, then the median of `repeats`
timed calls, reported per vectorised step; `relative` is that time over the fastest env's, the x axis of the
report's "duration against env complexity" charts.
"""
import argparse
import ast
import datetime
import glob
import importlib
import importlib.metadata
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time

PACKAGES = ("jax", "jaxlib", "flax", "optax", "gymnax", "equinox", "gymnasium", "torch", "tyro", "tensorboard", "numpy")
# Variables that change how a framework runs; recorded, never set, by the sweep.
ENV_VAR_PREFIXES = ("XLA_", "JAX_", "CUDA_", "NVIDIA_", "TORCH", "PYTORCH_", "OMP_", "MKL_", "OPENBLAS_")
REPO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# SYSTEM
def read_text(path: str) -> str:
    """The file's text; empty where it cannot be read (no /proc on this system)."""
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def cpu_model() -> str:
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


# what a sitting tool (benchmark.sh, the exp command sets) prints before it runs: the learning tier is not in the README's
# test command (one learning run per equivalence class is), and a reference sitting should stand on scripts that learn
LEARNING_CHECK = ("before a reference sitting: `python -m pytest -m learning` checks that every script learns on this "
                  "machine (one learning run per script, minutes; docs/running.md)")
# (vendor, family): [(first model, last model, name)]; a model not listed is named by its family and model numbers
MICROARCHITECTURES = {
    ("AuthenticAMD", 23): [(0x00, 0x2F, "Zen / Zen+"), (0x30, 0xFF, "Zen 2")],
    ("AuthenticAMD", 25): [(0x00, 0x0F, "Zen 3"), (0x10, 0x1F, "Zen 4"), (0x20, 0x5F, "Zen 3"), (0x60, 0x7F, "Zen 4"),
                           (0xA0, 0xAF, "Zen 4")],
    ("AuthenticAMD", 26): [(0x00, 0xFF, "Zen 5")],
    ("GenuineIntel", 6): [(0x3F, 0x3F, "Haswell"), (0x4F, 0x4F, "Broadwell"), (0x55, 0x55, "Skylake / Cascade Lake"),
                          (0x6A, 0x6C, "Ice Lake"), (0x8F, 0x8F, "Sapphire Rapids"), (0xAD, 0xAE, "Granite Rapids"),
                          (0xCF, 0xCF, "Emerald Rapids")],
}
VECTOR_EXTENSIONS = (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"), ("sve", "SVE"), ("asimd", "NEON"))


def cpuinfo_fields(text: str) -> dict:
    """The first processor's `name : value` lines of /proc/cpuinfo's text."""
    fields = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        name, _, value = line.partition(":")
        fields.setdefault(name.strip(), value.strip())
    return fields


def microarchitecture(vendor: str, family: int | None, model: int | None) -> str | None:
    for first, last, name in MICROARCHITECTURES.get((vendor, family), []):
        if model is not None and first <= model <= last:
            return name
    return None


def cpu_details(text: str) -> dict:
    """What tells two CPUs of one model name apart ("AMD EPYC" VMs have been several generations): vendor, family,
    model, stepping, clock, the widest vector extension and the microarchitecture (None where unknown), from
    /proc/cpuinfo's text."""
    fields = cpuinfo_fields(text)

    def number(name):
        value = fields.get(name, "")
        return int(value, 0) if value[:1].isdigit() else None

    flags = set((fields.get("flags") or fields.get("Features") or "").split())
    vendor, family, model = fields.get("vendor_id"), number("cpu family"), number("model")
    mhz = fields.get("cpu MHz")
    return {
        "vendor": vendor, "family": family, "model": model, "stepping": number("stepping"),
        "mhz": round(float(mhz)) if mhz else None,
        "vector": next((name for flag, name in VECTOR_EXTENSIONS if flag in flags), None),
        "microarchitecture": microarchitecture(vendor, family, model),
    }


def command_set_machine() -> dict:
    """What a command set's plan (exp10.json and its successors) records of the CPU: its model name as `machine` and
    its details (cpu_details)."""
    return {"machine": cpu_model(), "cpu_details": cpu_details(read_text("/proc/cpuinfo"))}


def gpu_info() -> dict | None:
    """Name and driver of the first GPU nvidia-smi reports (with the GPU count), None without one."""
    try:
        query = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line for line in query.stdout.splitlines() if line.strip()]
    if query.returncode != 0 or not lines:
        return None
    name, driver = (field.strip() for field in lines[0].split(",", 1))
    return {"name": name, "driver": driver, "count": len(lines)}


def package_versions() -> dict:
    """Installed versions from the package metadata (nothing is imported), None when missing."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_state() -> dict:
    """Commit of the repository and whether the work tree differs from it (results/ aside: a sweep writes there);
    BENCHBACK_GIT_COMMIT, where set, names the commit instead (a copy of the tree sent to a GPU machine, whose git
    folder, if any, need not be the tree's: its state is then unknown)."""

    def git(*args):
        return subprocess.run(["git", "-C", REPO_DIR, *args], capture_output=True, text=True)

    if os.environ.get("BENCHBACK_GIT_COMMIT"):
        return {"git_commit": os.environ["BENCHBACK_GIT_COMMIT"], "git_dirty": None}
    commit = git("rev-parse", "HEAD")
    if commit.returncode != 0:
        return {"git_commit": None, "git_dirty": None}
    dirty = git("status", "--porcelain", "--", ".", ":!results").stdout.strip()
    return {"git_commit": commit.stdout.strip(), "git_dirty": bool(dirty)}


def cpus_usable() -> int:
    """The cores this process may run on (its affinity mask: what a batch scheduler gave it), else all."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def system_info(command: str | None) -> dict:
    return {
        "hostname": socket.gethostname(),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": command,
        "cpu": cpu_model(),
        "cpu_details": cpu_details(read_text("/proc/cpuinfo")),
        "cpu_count": os.cpu_count(),
        "cpus_usable": cpus_usable(),
        "gpu": gpu_info(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": package_versions(),
        **git_state(),
        "environment": {name: value for name, value in sorted(os.environ.items()) if name.startswith(ENV_VAR_PREFIXES)},
    }


# ENV TIMING
def env_step_seconds(env_id: str, num_envs: int, num_steps: int, repeats: int) -> float:
    """Median seconds per vectorised step of `env_id`, in the benchmark's rollout regime."""
    import gymnax  # imported here: the sweep's other records and checks need no framework
    import jax

    if ":" in env_id:  # module:EnvId, built as the scripts build it (the module's make_gymnax)
        module, name = env_id.split(":", 1)
        env, env_params = importlib.import_module(module).make_gymnax(name)
    else:
        env, env_params = gymnax.make(env_id)
    num_actions = env.action_space(env_params).n
    reset_key, step_key, action_key = jax.random.split(jax.random.key(0), 3)
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(reset_key, num_envs), env_params)
    step_keys = jax.random.split(step_key, (num_steps, num_envs))
    actions = jax.random.randint(action_key, (num_steps, num_envs), 0, num_actions)
    vmapped_step = jax.vmap(env.step, in_axes=(0, 0, 0, None))

    @jax.jit
    def rollout(obs, state, step_keys, actions):
        def one_step(carry, inputs):
            obs, state = carry
            keys, action = inputs
            obs, state, reward, terminated, truncated, _ = vmapped_step(keys, state, action, env_params)
            return (obs, state), (reward, terminated, truncated)

        return jax.lax.scan(one_step, (obs, state), (step_keys, actions))

    jax.block_until_ready(rollout(obs, state, step_keys, actions))  # compile and warm up
    durations = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(rollout(obs, state, step_keys, actions))
        durations.append(time.perf_counter() - start)
    return statistics.median(durations) / num_steps


def env_timing(env_ids, num_envs: int = 32, num_steps: int = 256, repeats: int = 5) -> dict:
    import jax

    device = jax.devices()[0]
    seconds = {env_id: env_step_seconds(env_id, num_envs, num_steps, repeats) for env_id in env_ids}
    fastest = min(seconds.values())
    return {
        "num_envs": num_envs,
        "num_steps": num_steps,
        "repeats": repeats,
        "device": f"{device.platform}: {device.device_kind}",
        "envs": {env_id: {"step_seconds": s, "relative": s / fastest} for env_id, s in seconds.items()},
    }


def record_machine(out: str, env_ids, command: str | None, repeats: int = 5):
    """Writes OUT/system.json and OUT/env_timing.json, and prints each env's step time."""
    os.makedirs(out, exist_ok=True)
    write_json(os.path.join(out, "system.json"), system_info(command))
    timing = env_timing(env_ids, repeats=repeats)
    write_json(os.path.join(out, "env_timing.json"), timing)
    print(f"env step time ({timing['num_envs']} envs, {timing['device']}):")
    for env_id, entry in timing["envs"].items():
        print(f"  {env_id:<24} {entry['step_seconds'] * 1e6:9.1f} us  x{entry['relative']:.2f}")


# FINISHED RUNS
def run_finished(run_dir: str) -> bool:
    """True when an event file in `run_dir` holds the `time/total` scalar, which every script writes last."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    for path in glob.glob(os.path.join(run_dir, "events.out.tfevents.*")):
        for event in EventFileLoader(path).Load():
            if any(value.tag == "time/total" for value in event.summary.value):
                return True
    return False


# PACKAGES THE SCRIPTS NEED
def imported_packages(script: str) -> set[str]:
    """Top-level names of the non-standard-library packages `script` imports."""
    with open(script) as f:
        tree = ast.parse(f.read(), script)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names)


def import_problems(scripts) -> list[str]:
    """What keeps the scripts from running here: a script missing or unparsable, a package that does not import."""
    problems, packages = [], set()
    for script in scripts:
        try:
            packages |= imported_packages(script)
        except OSError:
            problems.append(f"{script} (missing)")
        except SyntaxError as error:
            problems.append(f"{script} (SyntaxError, line {error.lineno})")
    for name in sorted(packages):
        try:
            importlib.import_module(name)
        except Exception as error:  # an ImportError, or a broken install failing at import time
            problems.append(f"{name} ({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})")
    return problems


def write_json(path: str, data: dict):
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def main(argv=None):
    """python -m sweep.records OUT [ENV ...]: OUT/system.json and the env step times alone (default: every grid env)."""
    from sweep.experiments import GRID_ENVS

    parser = argparse.ArgumentParser(prog="python -m sweep.records", description=main.__doc__.split(": ", 1)[1])
    parser.add_argument("out", help="the folder that receives system.json and env_timing.json")
    parser.add_argument("envs", nargs="*", default=list(GRID_ENVS), help="the gymnax envs to time")
    args = parser.parse_args(argv)
    record_machine(args.out, args.envs, None)


if __name__ == "__main__":
    main()
