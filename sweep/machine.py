"""What a sitting records of its machine: system.json's fields (the CPU with the details that tell two CPUs of one
model name apart, the GPU, the packages' versions, the commit and whether the tree differs from it, the variables that
change how a framework runs), the part of it a command set's plan records, and what every sitting tool prints before
it runs (the learning check)."""
import datetime
import importlib.metadata
import os
import platform
import socket
import subprocess

PACKAGES = ("jax", "jaxlib", "flax", "optax", "gymnax", "equinox", "gymnasium", "torch", "tyro", "tensorboard", "numpy")
# Variables that change how a framework runs; recorded, never set, by the sweep.
ENV_VAR_PREFIXES = ("XLA_", "JAX_", "CUDA_", "NVIDIA_", "TORCH", "PYTORCH_", "OMP_", "MKL_", "OPENBLAS_")
REPO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))



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
    """What a command set's plan (its <exp>.json) records of the CPU: its model name as `machine` and its details
    (cpu_details)."""
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
