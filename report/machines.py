"""The machine a sweep ran on, from its system.json: its kind (what runs must share to be compared) and the machine
in words for the report's header and a comparison's sides."""

from collections import defaultdict


def gpu_model(system):
    """The GPU's model name from a system.json, None without a GPU."""
    gpu = system.get("gpu")
    return gpu.get("name", "?") if isinstance(gpu, dict) else gpu or None


def cpu_generation(system):
    """The CPU's microarchitecture, family and model and widest vector extension, 'Zen 5, family 26 model 2, AVX-512';
    None where system.json predates these details (one model name, "AMD EPYC", has covered several generations)."""
    details = system.get("cpu_details") or {}
    if details.get("family") is None:
        return None
    words = [details["microarchitecture"]] if details.get("microarchitecture") else []
    words.append(f"family {details['family']} model {details['model']}")
    return ", ".join(words + ([details["vector"]] if details.get("vector") else []))


def cpu_name(system):
    """'AMD EPYC (Zen 5, family 26 model 2, AVX-512)', or the model name alone where the generation is unknown."""
    generation = cpu_generation(system)
    return (system.get("cpu") or "unknown CPU") + (f" ({generation})" if generation else "")


def plan_machine(plan):
    """A command set's plan's machine in words (its `machine` and `cpu_details`): 'AMD EPYC (Zen 5, family 26 model 2,
    AVX-512)', or 'AMD EPYC (generation not recorded)'."""
    system = {"cpu": plan.get("machine") or "an unknown machine", "cpu_details": plan.get("cpu_details")}
    return cpu_name(system) if cpu_generation(system) else f"{system['cpu']} (generation not recorded)"


def machine_kind(system):
    """What runs must share to be ranked or paired: the CPU (its generation where recorded) and the GPU model, e.g.
    'AMD EPYC (Zen 5, family 26 model 2, AVX-512), no GPU'."""
    if system is None:
        return "unknown machine (no system.json)"
    return f"{cpu_name(system)}, {gpu_model(system) or 'no GPU'}"


def cpu_difference(named_systems):
    """A warning where CPUs whose numbers are set side by side may differ: their generations differ, or one is not
    recorded; None where all are recorded and the same. named_systems: [(name, system.json)]."""
    generations = {name: cpu_name(system) for name, system in named_systems}
    models = {system.get("cpu") for _, system in named_systems}
    unknown = [name for name, system in named_systems if cpu_generation(system) is None]
    if len(models) > 1 or (not unknown and len(set(generations.values())) > 1):
        return ("**different CPUs**, so a ratio across them mixes the CPU with the framework: "
                + "; ".join(f"{name}: {cpu}" for name, cpu in generations.items()))
    if unknown:
        return (f"**the CPU's generation is not recorded** for {', '.join(unknown)} (a record from before system.json "
                "held it): the same model name has covered several generations, so the CPUs may differ")
    return None


def gpu_text(system):
    """'NVIDIA H100 80GB HBM3 (driver 580.65) ×1', or 'none (CPU only)'."""
    name, gpu = gpu_model(system), system.get("gpu")
    if not name:
        return "none (CPU only)"
    driver, count = (gpu.get("driver"), gpu.get("count", 1)) if isinstance(gpu, dict) else (system.get("driver"), 1)
    return f"{name}" + (f" (driver {driver})" if driver else "") + f" ×{count}"


def cpu_text(system):
    """'AMD EPYC (Zen 5, family 26 model 2, AVX-512), 2 cores' (the generation and core count where known)."""
    cores = system.get("cpu_count")
    return cpu_name(system) + (f", {cores} cores" if cores else "")


def machine_summary(systems):
    """The machine and the date in a few words, per folder where they differ: '2-core AMD EPYC, no GPU, 2026-11-24,
    commit 141883d' (short commit; '(dirty)' after it where the working tree was)."""
    if not systems:
        return "unknown (no system.json)"
    texts = []
    for _, system in systems:
        cores, gpu, gpus = system.get("cpu_count"), gpu_model(system), system.get("gpu")
        count = gpus.get("count", 1) if isinstance(gpus, dict) else 1
        words = [f"{cores}-core {cpu_name(system)}" if cores else cpu_name(system),
                 (f"{count}× " * (count > 1) + gpu) if gpu else "no GPU"]
        words += [str(system["date"])[:10]] if system.get("date") else []
        if system.get("git_commit"):
            words.append(f"commit {system['git_commit'][:7]}" + " (dirty)" * (system.get("git_dirty") is True))
        texts.append(", ".join(words))
    if len(set(texts)) == 1:
        return texts[0]
    return "; ".join(f"`{folder.name}`: {text}" for (folder, _), text in zip(systems, texts))


def packages_text(system):
    """'jax 0.10.2, torch 2.13.0, …' from system.json's packages."""
    return ", ".join(f"{name} {version}" for name, version in (system.get("packages") or {}).items() if version) or "?"


def machine_lines(systems, invocations=None):
    """One block per system.json: machine, software, commit, command (and load or wall time where recorded); where
    invocations ({folder: how many invocations of benchmark.sh wrote it}) counts several, the command is named the
    last invocation's (system.json holds only that one; condition_lines gives them all)."""
    if not systems:
        return ["- **Machine:** unknown: no system.json was found.", ""]
    lines = []
    for folder, system in systems:
        dirty = {True: " (working tree dirty)", False: " (clean)"}.get(system.get("git_dirty"), "")
        extras = [f"**{key.replace('_', ' ')}:** {value}" for key, value in system.items()
                  if ("load" in key or "wall" in key) and value is not None]
        lines += [
            *([f"- **folder:** `{folder}`"] if len(systems) > 1 else []),
            f"- **CPU:** {cpu_text(system)}; **GPU:** {gpu_text(system)}",
            f"- **Python:** {system.get('python', '?')}; **packages:** {packages_text(system)}",
            f"- **git commit:** {system.get('git_commit') or 'unknown'}{dirty}; **host:** {system.get('hostname', '?')}; "
            f"**date:** {system.get('date', '?')}",
            command_label((invocations or {}).get(folder, 1)) + f" `{system.get('command', '?')}`"
            + "".join(f"; {extra}" for extra in extras),
            "",
        ]
    return lines


def command_label(invocations):
    """'- **command:**', or for a folder that several invocations wrote, whose system.json holds the last one's."""
    return "- **command:**" if invocations < 2 else f"- **command of the last of its {invocations} invocations:**"


def shard_differences(systems):
    """Lines naming what differs between the folders' machines (hardware, package versions); none when alike."""
    if len(systems) < 2:
        return []
    aspects = {"hardware": lambda system: f"{cpu_text(system)}; GPU {gpu_text(system)}",
               "package versions": lambda system: f"Python {system.get('python', '?')}, {packages_text(system)}"}
    lines = []
    for aspect, describe in aspects.items():
        seen = defaultdict(list)
        for folder, system in systems:
            seen[describe(system)].append(folder.name)
        if len(seen) > 1:
            lines.append(f"- **Warning: the folders ran on different {aspect}**, so their runs are not like for like: "
                         + "; ".join(f"{', '.join(names)}: {text}" for text, names in seen.items()))
    return lines + [""] if lines else []
