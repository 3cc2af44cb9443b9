"""The report's header (machine, sweep conditions, workload, what the sweep lacks) and the sections on how to read
it."""

import itertools
from collections import Counter

import numpy as np

from sweep.experiments import ALL, BY_NAME, UNFILED
from sweep.variants import DQN
from report.machines import machine_lines, shard_differences
from report.settings import MIN_ENVS_FOR_CI, WINDOWS, WORK_FIELDS
from report.stats import algorithm_of, is_eager, rows_of
from report.summary import num_envs, ordered
from report.text import listed, markdown_table
from report.types import group_cell_key


QUICK_WARNING = ("> **Smoke test, not results:** this sweep ran `benchmark.sh --quick` (a reduced workload) to check "
                 "the pipeline; its numbers show the shape of the effects only.")


def is_quick(sweep):
    """True when the sweep was run with benchmark.sh --quick (its command line or workload.json says so)."""
    commands = [system.get("command") or "" for _, system in sweep.systems]
    return any("--quick" in command.split() for command in commands) or any(
        workload.get("quick") for _, workload in sweep.workload_files)


def condition_lines(sweep):
    """The sweep's wall time and the load average while it ran, as benchmark.sh recorded them."""
    lines = []
    for folder, conditions in sweep.conditions:
        parts = []
        if conditions.wall_seconds:
            total = sum(conditions.wall_seconds)
            several = len(conditions.wall_seconds) > 1
            parts.append(f"**sweep wall time:** {total / 60:.1f} min ({total:.0f} s"
                         + (f", {len(conditions.wall_seconds)} invocations" if several else "")
                         + (f" from {conditions.span[0]} to {conditions.span[1]}" if several else "") + ")")
            parts += [invocations_text(conditions.commands)] if several else []
        if conditions.loads:
            loads = sorted(conditions.loads)
            parts.append(f"**1-minute load average at the end of each run:** median {float(np.median(loads)):.2f}, "
                         f"range {loads[0]:.2f}–{loads[-1]:.2f} over {len(loads)} runs (a run itself accounts for "
                         f"about 1–2 on this count; more means something else was running)")
        prefix = f"`{folder.name}`: " if max(len(sweep.conditions), len(sweep.systems)) > 1 else ""
        lines.append("- " + prefix + "; ".join(parts))
    return lines + [""] if lines else []


def invocations_text(commands):
    """The command lines of a sweep's invocations, each once with how many ran it; older sweeps.txt files recorded
    none, and then only system.json's command, the last invocation's, is known."""
    if not any(commands):
        return ("**commands:** not recorded per invocation (its sweeps.txt predates that record): only the last "
                "invocation's is known, above")
    counts = Counter(commands)
    return "**commands (invocations):** " + ", ".join(
        f"`{command}` ({count})" if command else f"not recorded ({count})" for command, count in counts.items())


def varies_num_envs(exp):
    """Whether an experiment's runs differ in the number of envs by design (Experiment.varies_num_envs)."""
    return exp in BY_NAME and BY_NAME[exp].varies_num_envs


def workload_key(row):
    """What the header groups runs by: their workload; those of an experiment whose runs differ in the number of envs
    by design, by the rest of it."""
    work = row["condition"].work
    return (row["exp"], ("", *work[1:])) if varies_num_envs(row["exp"]) else ("", work)


def dqn_workload_lines(rows, env_order):
    """The DQN runs' workload in one line: their numbers of envs, and each workload of the runs: env steps
    (transitions), iterations and replay memory (buffer), with the envs of each where they differ (a MinAtar env has
    its own); PPO's per-iteration fields do not apply to DQN."""
    if not rows:
        return []
    counts = "/".join(map(str, sorted({num_envs(row) or 0 for row in rows})))
    envs = ordered((row["env"] for row in rows), env_order)
    key = lambda row: (row["env_steps"], row["num_iterations"], row["buffer_size"])
    workloads = ordered(map(key, rows), [key(row) for env in envs for row in rows if row["env"] == env])
    parts = []
    for steps, length, buffer_size in workloads:
        part = f"{steps:,.0f} transitions in {length} iterations"
        part += f" (buffer {buffer_size:,})" if buffer_size else ""
        if len(workloads) > 1:
            part += " on " + listed(ordered((row["env"] for row in rows if key(row) == (steps, length, buffer_size)),
                                            env_order))
        parts.append(part)
    exps = ", ".join(sorted({row["exp"] for row in rows}))
    return [f"- **Workload ({exps}, DQN):** num_envs {counts}; {'; '.join(parts)}; {len(rows)} runs on {len(envs)} envs "
            f"({', '.join(envs)})"]


def workload_lines(sweep):
    """The per-iteration workloads and iteration counts of the runs, eager and compiled apart; those of an experiment
    whose runs differ in the number of envs by design in one line; the DQN runs in their own."""
    lines = []
    ppo_rows = [row for row in sweep.rows if algorithm_of(row["label"]) != DQN]
    for (exp, work), rows in itertools.groupby(sorted(ppo_rows, key=workload_key), key=workload_key):
        rows = list(rows)
        counts = lambda eager: sorted({row["num_iterations"] for row in rows if is_eager(row["label"]) == eager})
        envs = ordered((row["env"] for row in rows), sweep.env_order)
        if exp:
            work = ("/".join(map(str, sorted({num_envs(row) or 0 for row in rows}))), *work[1:])
        settings = ", ".join(f"{name} {value}" for name, value in zip(WORK_FIELDS, work))
        compiled, eager = counts(False), counts(True)
        lines.append(f"- **Workload{f' ({exp})' if exp else ''}:** {settings}; iterations "
                     f"{'/'.join(map(str, compiled)) or '–'}, eager iterations {'/'.join(map(str, eager)) or '–'}; "
                     f"{len(rows)} runs on {len(envs)} envs ({', '.join(envs)})")
    lines += dqn_workload_lines([row for row in sweep.rows if algorithm_of(row["label"]) == DQN], sweep.env_order)
    for folder, workload in sweep.workload_files:
        lines.append(f"- **workload.json** (`{folder.name}`): " + ", ".join(f"{k} {v}" for k, v in workload.items()))
    varied = "".join(f"; {experiment.name}'s runs, which differ in the number of envs by design, meet only in its cost "
                     "model and its comparisons at the same N" for experiment in ALL
                     if experiment.varies_num_envs and rows_of(sweep.rows, experiment.name))
    if len(lines) > 1 + len(sweep.workload_files) or varied:
        lines.append(f"- Runs of different workloads are never paired with each other{varied}.")
    return lines + [""]


def machine_kind_lines(sweep):
    """One line naming the machine kinds of a sweep of several, and that runs are compared only within one kind."""
    if len(sweep.machines) < 2:
        return []
    kinds = "; ".join(f"**machine {number}:** {kind} ({', '.join(f'`{folder.name}`' for folder in folders)})"
                      for number, (kind, folders) in enumerate(sweep.machines.items(), 1))
    return [f"- **This sweep mixes {len(sweep.machines)} machine kinds** (CPU model, GPU model; each folder's "
            f"system.json): {kinds}. Runs are ranked and paired only within one kind: every section but 'The "
            "answer', 'Method and machine', 'How to read this report' and 'Environment complexity' is written once "
            "per kind, its heading naming the kind.", ""]


def absent_lines(sweep):
    """One line naming the experiments the sweep does not hold (their sections are left out); none when it holds all.
    An experiment that a command set of its own runs on a CPU (its command_set) is not a gap of a sweep: left out."""
    absent = [f"{experiment.name} ({experiment.topic})" for experiment in ALL
              if not experiment.prepares and not experiment.command_set and not rows_of(sweep.rows, experiment.name)]
    return [f"- **Not in this sweep:** {'; '.join(absent)}.", ""] if absent else []


def window_lines(sweep):
    """Which iterations each window holds for each run length in the sweep."""
    lines = []
    for length in sorted({row["num_iterations"] for row in sweep.rows}):
        held = []
        for window, (first, last, _) in WINDOWS.items():
            last = min(last, length - 1)
            held.append(f"{window}: " + ("none" if last < first else f"{first}" if last == first else f"{first}–{last}"))
        lines.append(f"- **Iterations each window holds, runs of {length} iterations:** " + "; ".join(held))
    return lines + [""]


def header_section(sweep):
    """What a reader needs before the numbers: smoke-test warning, machine, software, commit, workload, windows."""
    lines = [QUICK_WARNING, ""] if is_quick(sweep) else []
    invocations = {folder: len(conditions.wall_seconds) for folder, conditions in sweep.conditions}
    lines += machine_lines(sweep.systems, invocations) + shard_differences(sweep.systems) + machine_kind_lines(sweep)
    return lines + condition_lines(sweep) + workload_lines(sweep) + absent_lines(sweep) + window_lines(sweep)


def definitions_section(sweep):
    """How to read the numbers: speedup, windows, statistics, repeats (of a grouped experiment: groups of one variant
    and N agents)."""
    repeats = Counter((row["label"], row["condition"], row["num_iterations"])
                      for row in sweep.rows if not (row["exp"] in BY_NAME and BY_NAME[row["exp"]].grouped))
    repeats.update((group.label, group_cell_key(group), group.agents) for group in sweep.groups)
    counts = sorted(set(repeats.values()))
    steady = sweep.names["iter8_99_median_s"]
    synchronised = listed([experiment.name for experiment in ALL if experiment.timing == "sync"])
    return [
        "## How to read this report",
        "",
        f"- {len(sweep.rows)} finished runs; repeats (seeds) per configuration: {', '.join(map(str, counts))}.",
        "- **Speedup of A over B** = time_B / time_A for the same experiment, env, model size, timing mode and "
        "per-iteration workload, paired by seed (only the same seed; totals only between runs of the same number "
        "of iterations). Above 1× means A is faster.",
        "- Windows of `time/iteration`: **iteration 0** (holds compilation), **iterations 1–7** (mean), "
        f"**{steady}** (median: the steady state). **Start-up** (`time/startup`: imports, device "
        "and model creation) precedes iteration 0. **Total** is `time/total` (iteration 0 to the end).",
        f"- {UNFILED['async']} runs asynchronously (the honest end-to-end time); {synchronised} synchronise around "
        "rollout and update to time them separately, which adds host syncs.",
        f"- Intervals over envs (each env once, its seeds averaged): with {MIN_ENVS_FOR_CI} or more envs a **95% CI** "
        "of a geometric mean (Student's t on the envs' mean log speedups) and, for a median, the distribution-free "
        "interval between two envs' values, labelled with its exact coverage (e.g. 96% CI at 12 envs); with fewer "
        "envs the **range** (min–max over envs), which is no confidence interval. Both describe the spread over "
        "this sweep's envs and seeds on this machine, not across machines.",
        "",
    ]


def env_section(sweep):
    """The env complexity axis: step time relative to the fastest env."""
    if not sweep.env_relative:
        return []
    header = ["env", "step time relative to the fastest env"]
    return ["## Environment complexity", "", "From env_timing.json (the sweep's own regime).", ""] + markdown_table(
        header, [[env, f"{sweep.env_relative[env]:.3g}"] for env in sweep.env_order if env in sweep.env_relative]
    )
