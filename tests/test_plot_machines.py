"""plot.py on a sweep whose shards ran on different machine kinds: one ranking and one set of pairs per kind."""

import csv

import pytest

from events import write_json, write_run
from test_plot import check_answer, run_plot, wordy_lines

ENVS = ("CartPole-v1", "Acrobot-v1")
# Per shard: its CPU and the iteration times of linen (jit) and torch_compile (compile). On the EPYC linen is
# faster in total (15 s against 19.5 s), on the Xeon torch_compile is (19.5 s against 26 s).
SHARDS = {
    "a": ("AMD EPYC", [4.0] + [1.0] * 11, [14.0] + [0.5] * 11),
    "b": ("Intel Xeon", [4.0] + [2.0] * 11, [14.0] + [0.5] * 11),
}


def write_shard(folder, cpu, linen_seconds, torch_seconds, seed=1):
    """One shard folder: exp1 runs of linen (jit) and torch_compile (compile) on ENVS, and its system.json."""
    for env in ENVS:
        write_run(folder / "runs" / "exp1" / f"linen_{env}", linen_seconds, env_id=env, seed=seed)
        write_run(folder / "runs" / "exp1" / f"torch_{env}", torch_seconds, variant="ppo_torch_compile",
                  compile_mode="compile", env_id=env, seed=seed)
    write_json(folder / "system.json", {"cpu": cpu, "cpu_count": 2, "gpu": None, "python": "3.11.7",
                                        "hostname": f"node-{folder.name}", "command": "./benchmark.sh --shard"})
    return folder


@pytest.fixture(scope="module")
def two_kinds(tmp_path_factory):
    """The two shards (same runs and seeds, different CPUs) read as one sweep: out folder, result, report."""
    root = tmp_path_factory.mktemp("kinds")
    shards = [write_shard(root / name, *shard) for name, shard in SHARDS.items()]
    result = run_plot(*shards, "--out", root / "report")
    return root / "report", result, (root / "report" / "REPORT.md").read_text()


def section(report, heading):
    """The section under heading, up to the next one."""
    start = report.index(heading + "\n")
    end = report.find("\n## ", start + 1)
    return report[start: end if end >= 0 else len(report)]


def test_the_header_names_both_machines_and_that_runs_are_compared_only_within_a_kind(two_kinds):
    _, result, report = two_kinds
    assert result.returncode == 0, result.stderr
    head = section(report, "## Method and machine")
    assert report.index("## The answer") < report.index("## Which variant") < report.index("## Method and machine")
    assert "**CPU:** AMD EPYC, 2 cores" in head and "**CPU:** Intel Xeon, 2 cores" in head
    assert ("- **This sweep mixes 2 machine kinds** (CPU model, GPU model; each folder's system.json): **machine 1:** "
            "AMD EPYC, no GPU (`a`); **machine 2:** Intel Xeon, no GPU (`b`). Runs are ranked and paired only within "
            "one kind") in head


def test_each_machine_kind_gets_its_own_ranking_from_its_own_runs(two_kinds):
    out, _, report = two_kinds
    epyc = section(report, "## Which variant is fastest? (exp1, fully compiled variants) — machine 1: AMD EPYC, no GPU")
    xeon = section(report, "## Which variant is fastest? (exp1, fully compiled variants) — machine 2: Intel Xeon, no GPU")
    assert "  - **linen (jit)** is fastest in total.\n" in epyc
    assert "| small | torch_compile (compile) | 2 | 1.30× [range 1.30–1.30] |" in epyc
    assert "  - **torch_compile (compile)** is fastest in total.\n" in xeon
    assert "| small | linen (jit) | 2 | 1.33× [range 1.33–1.33] |" in xeon
    # the answer gives each kind's ranking, linked to the kind's own section
    answer = section(report, "## The answer")
    check_answer(report, {"exp1"})
    assert wordy_lines(report) == []
    # on the steady iteration torch_compile is shortest on both, by 2× on one and 4× on the other, each kind's own
    assert ("- [exp1 · small (machine 1)](#which-variant-is-fastest-exp1-fully-compiled-variants--machine-1-amd-epyc-no-"
            "gpu): steady iteration: torch_compile (compile) shortest (0.5 s); JAX at best 2.00× [range 2.00–2.00] "
            "(linen (jit)); one run per cell.") in answer
    assert ("- [exp1 · small (machine 2)](#which-variant-is-fastest-exp1-fully-compiled-variants--machine-2-intel-xeon-"
            "no-gpu): steady iteration: torch_compile (compile) shortest (0.5 s); JAX at best 4.00× [range 4.00–4.00] "
            "(linen (jit)); one run per cell.") in answer
    assert "start (machine 1)](#which-variant-is-fastest-exp1-fully-compiled-variants--machine-1-amd-epyc-no-gpu): " \
        "linen (jit) starts quickest (iteration 0: 4 s); a faster steady iteration repays its slower start after 21 " \
        "iterations (torch_compile (compile))." in answer
    assert (out / "ranking_machine1.png").exists() and (out / "ranking_machine2.png").exists()
    assert not (out / "ranking.png").exists()


def test_no_pair_crosses_machine_kinds(two_kinds):
    out, result, report = two_kinds
    assert "repeats" not in result.stderr  # the same configuration and seed on two kinds is no duplicate
    with open(out / "summary.csv", newline="") as file:
        assert len(list(csv.DictReader(file))) == 8
    heading = "## Speedups between the fully compiled variants: total duration (exp1) — "
    # 2 pairs (one per env) in each kind, never the 4 that pairing across the kinds would give
    assert "| small | linen (jit) over torch_compile (compile) | 2 | 2 | 1.30× [range 1.30–1.30] |" in section(
        report, heading + "machine 1: AMD EPYC, no GPU")
    assert "| small | linen (jit) over torch_compile (compile) | 2 | 2 | 0.75× [range 0.75–0.75] |" in section(
        report, heading + "machine 2: Intel Xeon, no GPU")


def test_shards_of_one_machine_kind_read_as_one_sweep(tmp_path):
    shards = [write_shard(tmp_path / name, "AMD EPYC", *SHARDS["a"][1:], seed=seed)
              for name, seed in (("a", 1), ("b", 2))]
    result = run_plot(*shards, "--out", tmp_path / "report")
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "report" / "REPORT.md").read_text()
    assert "machine kinds" not in report and " — machine" not in report
    assert "| small | linen (jit) over torch_compile (compile) | 4 | 2 | 1.30× [range 1.30–1.30] |" in report
    assert (tmp_path / "report" / "ranking.png").exists()


# "AMD EPYC" has named several generations: system.json records the CPU's details (sweep/machine.py cpu_details)
ZEN4_CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
stepping\t: 1
cpu MHz\t\t: 2600.000
flags\t\t: fpu sse2 avx avx2 avx512f avx512bw

processor\t: 1
vendor_id\t: AuthenticAMD
"""


def test_system_json_tells_two_cpus_of_one_model_name_apart_by_their_generation():
    from report.machines import cpu_difference, cpu_name, machine_kind
    from sweep.machine import cpu_details

    details = cpu_details(ZEN4_CPUINFO)
    assert details == {"vendor": "AuthenticAMD", "family": 25, "model": 17, "stepping": 1, "mhz": 2600,
                       "vector": "AVX-512", "microarchitecture": "Zen 4"}
    zen4 = {"cpu": "AMD EPYC", "cpu_details": details}
    zen5 = {"cpu": "AMD EPYC", "cpu_details": {**details, "family": 26, "model": 2, "microarchitecture": "Zen 5"}}
    assert cpu_name(zen4) == "AMD EPYC (Zen 4, family 25 model 17, AVX-512)"
    assert machine_kind(zen4) != machine_kind(zen5)  # never ranked or paired as one machine kind
    assert "different CPUs" in cpu_difference([("A", zen4), ("B", zen5)])
    assert "not recorded" in cpu_difference([("A", zen4), ("B", {"cpu": "AMD EPYC"})])
    assert cpu_difference([("A", zen4), ("B", dict(zen4))]) is None
    assert cpu_details("")["microarchitecture"] is None  # no /proc/cpuinfo: nothing invented


def test_compare_says_when_its_two_sides_ran_on_different_cpus(tmp_path):
    sides = []
    for name, family, model in (("a", 25, 17), ("b", 26, 2)):
        folder = write_shard(tmp_path / name, "AMD EPYC", [4.0] + [1.0] * 11, [14.0] + [0.5] * 11)
        system = {"cpu": "AMD EPYC", "cpu_count": 2, "gpu": None,
                  "cpu_details": {"vendor": "AuthenticAMD", "family": family, "model": model}}
        write_json(folder / "system.json", system)
        sides.append(folder)
    result = run_plot("--compare", sides[0], "--vs", sides[1], "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "out" / "REPORT.md").read_text()
    assert ("- **Warning:** A and B ran on **different CPUs**, so a ratio across them mixes the CPU with the "
            "framework: A: AMD EPYC (family 25 model 17); B: AMD EPYC (family 26 model 2).") in report
