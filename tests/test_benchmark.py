"""benchmark.sh: the grid it lists (dry runs) and how it runs, records and resumes a sweep."""

import itertools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENVS = [
    "CartPole-v1",
    "Acrobot-v1",
    "MountainCar-v0",
    "DiscountingChain-bsuite",
    "MemoryChain-bsuite",
    "UmbrellaChain-bsuite",
    "BernoulliBandit-misc",
    "GaussianBandit-misc",
    "Asterix-MinAtar",
    "Breakout-MinAtar",
    "Freeway-MinAtar",
    "SpaceInvaders-MinAtar",
]
SIZES = ["small", "medium", "large"]
PAIRS = [
    ("ppo_linen", "none"),
    ("ppo_linen", "jit"),
    ("ppo_nnx", "none"),
    ("ppo_nnx", "jit"),
    ("ppo_nnx_cached", "cached"),
    ("ppo_torch", "none"),
    ("ppo_torch", "env-jit"),
    ("ppo_torch_compile", "compile"),
]
COMPILED = [("ppo_linen", "jit"), ("ppo_nnx_cached", "cached"), ("ppo_torch_compile", "compile")]
MODE_FLAGS = {  # the flag each (script, mode) passes; the other modes are their script's default
    ("ppo_linen", "none"): "--no-jit",
    ("ppo_nnx", "none"): "--no-jit",
    ("ppo_torch", "none"): "--no-jit-env",
}
FLAGS = {"--no-jit", "--no-jit-env"}


def benchmark(*args, repo=REPO, **kwargs):
    env = {**os.environ, "PYTHON": sys.executable}
    return subprocess.run(
        ["bash", str(repo / "benchmark.sh"), *args], capture_output=True, text=True, env=env, timeout=300, **kwargs
    )


def dry_run(*args):
    """The runs of `benchmark.sh --dry-run ARGS` as dicts: index, exp, argv and the fields of the command."""
    result = benchmark("--dry-run", *args)
    assert result.returncode == 0, result.stderr
    runs = []
    for line in result.stdout.splitlines():
        index, exp, *argv = shlex.split(line)
        options = {word: argv[i + 1] for i, word in enumerate(argv[:-1]) if word.startswith("--")}
        flags = [word for word in argv if word in FLAGS]
        run_name = options["--run-name"]
        _, _, mode, _, _, _ = run_name.split("__")
        runs.append(
            {
                "line": line,
                "index": int(index),
                "exp": exp,
                "python": argv[0],
                "script": Path(argv[1]).stem,
                "mode": mode,
                "flags": flags,
                "env": options["--env-id"],
                "size": options["--model-size"],
                "seed": int(options["--seed"]),
                "sync": "--sync-timing" in argv,
                "iterations": int(options["--num-iterations"]) if "--num-iterations" in argv else None,
                "log_dir": options["--log-dir"],
                "run_name": run_name,
            }
        )
    return runs


def configs(runs, exp):
    return Counter((r["script"], r["mode"], r["env"], r["size"]) for r in runs if r["exp"] == exp)


# THE GRID
def test_reference_grid_has_231_runs_with_the_spec_count_per_experiment():
    runs = dry_run()
    assert len(runs) == 231
    assert Counter(r["exp"] for r in runs) == {"warmup": 3, "exp1": 108, "exp2": 96, "exp3": 24}
    assert [r["index"] for r in runs] == list(range(1, 232))


def test_reference_grid_is_the_spec_product_for_each_experiment():
    runs = dry_run()
    expected = {
        "warmup": itertools.product(COMPILED, ["CartPole-v1"], ["small"]),
        "exp1": itertools.product(COMPILED, ENVS, SIZES),
        "exp2": itertools.product(PAIRS, ENVS, ["small"]),
        "exp3": itertools.product(PAIRS, ["Acrobot-v1"], SIZES),
    }
    for exp, product in expected.items():
        assert configs(runs, exp) == Counter((s, m, e, z) for (s, m), e, z in product), exp
    assert all(r["sync"] == (r["exp"] in ("exp2", "exp3")) for r in runs)
    # every script, env, size and compile mode appears; envs in SPEC order
    assert {r["script"] for r in runs} == {s for s, _ in PAIRS}
    assert list(dict.fromkeys(r["env"] for r in runs if r["exp"] == "exp1")) == ENVS
    assert {(r["script"], r["mode"]) for r in runs} == set(PAIRS)
    assert {r["size"] for r in runs} == set(SIZES)


def test_each_compile_mode_passes_its_flag_and_the_defaults_pass_none():
    for r in dry_run():
        expected = [MODE_FLAGS[(r["script"], r["mode"])]] if (r["script"], r["mode"]) in MODE_FLAGS else []
        assert r["flags"] == expected, r["line"]


def test_runs_have_explicit_seed_run_name_and_log_dir_under_out(tmp_path):
    out = tmp_path / "sweep"
    runs = dry_run("--out", str(out))
    for r in runs:
        assert r["run_name"] == f"{r['exp']}__{r['script']}__{r['mode']}__{r['env']}__{r['size']}__{r['seed']}"
        assert r["log_dir"] == str(out / "runs" / r["exp"])
        assert r["seed"] == 1
        assert r["iterations"] is None  # the scripts' own default, 100
        assert r["python"] == sys.executable  # $PYTHON
    assert len({r["run_name"] for r in runs}) == len(runs)


def test_relative_out_is_made_absolute_from_the_callers_directory(tmp_path):
    result = benchmark("--dry-run", "--out", "rel/sweep", "--only", "exp3", cwd=tmp_path)
    assert f"--log-dir {tmp_path}/rel/sweep/runs/warmup " in result.stdout.splitlines()[0]


def test_repeats_2_doubles_the_grid_with_seeds_1_and_2():
    runs = dry_run("--repeats", "2")
    assert len(runs) == 462
    assert len({r["run_name"] for r in runs}) == 462
    assert [r["seed"] for r in runs] == [1] * 231 + [2] * 231
    config = [(r["exp"], r["script"], r["mode"], r["env"], r["size"]) for r in runs]
    assert config[:231] == config[231:]  # the same grid in the same order, once per seed


@pytest.mark.parametrize("n", [1, 2, 7])
def test_shards_partition_the_grid_into_interleaved_slices(n):
    grid = [r["line"] for r in dry_run()]
    shards = []
    for k in range(1, n + 1):
        shards.append(benchmark("--dry-run", "--shard", f"{k}/{n}").stdout.splitlines())
    assert sorted(itertools.chain(*shards)) == sorted(grid)  # no overlap, no loss
    for k, shard in enumerate(shards):
        assert shard == grid[k::n]


def test_filter_keeps_exactly_the_lines_that_match():
    grid = dry_run()
    regex = r"ppo_torch_compile.*(Breakout|Acrobot)"
    runs = dry_run("--filter", regex)
    assert [r["line"] for r in runs] == [r["line"] for r in grid if re.search(regex, r["line"])]
    assert Counter(r["exp"] for r in runs) == {"exp1": 6, "exp2": 2, "exp3": 3}


def test_only_keeps_one_experiment_and_the_warmup_runs():
    for exp, count in [("exp1", 108), ("exp2", 96), ("exp3", 24)]:
        runs = dry_run("--only", exp)
        assert Counter(r["exp"] for r in runs) == {"warmup": 3, exp: count}
    assert {r["exp"] for r in dry_run("--only", "exp2", "--filter", " exp2 ")} == {"exp2"}


def test_only_filter_and_shard_combine_in_that_order():
    selected = [r["line"] for r in dry_run("--only", "exp3", "--filter", "medium")]
    assert len(selected) == 8
    assert [r["line"] for r in dry_run("--only", "exp3", "--filter", "medium", "--shard", "2/3")] == selected[1::3]


def test_iterations_are_passed_to_every_run():
    assert {r["iterations"] for r in dry_run("--iterations", "7")} == {7}
    assert {r["iterations"] for r in dry_run("--quick", "--iterations", "3")} == {3}


@pytest.mark.parametrize(
    "args",
    [
        ["--bogus"],
        ["--repeats", "0"],
        ["--repeats", "two"],
        ["--iterations", "-1"],
        ["--timeout", "1.5"],
        ["--shard", "3/2"],
        ["--shard", "0/2"],
        ["--shard", "1"],
        ["--only", "exp4"],
        ["--filter", "("],
        ["--filter", "no run matches this"],
        ["--out"],
        ["--out="],
        ["extra"],
    ],
)
def test_bad_options_fail_with_one_line_on_stderr_and_exit_2(args):
    result = benchmark("--dry-run", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("benchmark.sh: ")


def test_help_documents_every_option():
    result = benchmark("--help")
    assert result.returncode == 0
    for option in ["--dry-run", "--out", "--repeats", "--filter", "--only", "--iterations", "--quick", "--shard", "--timeout"]:
        assert option in result.stdout


def test_quick_touches_every_pair_two_sizes_both_timing_modes_and_every_env_family():
    runs = dry_run("--quick")
    assert len(runs) < 40
    assert {(r["script"], r["mode"]) for r in runs} == set(PAIRS)
    assert {(r["script"], r["mode"]) for r in runs if r["exp"] == "exp2"} == set(PAIRS)
    assert {r["size"] for r in runs if r["exp"] == "exp3"} == {"small", "medium"}
    exp3 = {(r["script"], r["mode"], r["size"]) for r in runs if r["exp"] == "exp3"}
    assert exp3 == {(*pair, "small") for pair in PAIRS} | {(*pair, "medium") for pair in set(PAIRS) - set(MODE_FLAGS)}
    assert {r["sync"] for r in runs} == {True, False}
    assert {r["exp"] for r in runs} == {"warmup", "exp1", "exp2", "exp3"}
    families = {r["env"].split("-")[-1] for r in runs}
    assert {"v1", "bsuite", "MinAtar"} <= families
    assert len({r["env"] for r in runs if r["exp"] == "exp1"}) >= 3  # an env-complexity axis
    # enough iterations to fill plot.py's windows 0, 1-7 and 8-99, far fewer than 100
    assert {r["iterations"] for r in runs} == {10}


def test_sweep_info_records_the_machine_without_importing_a_framework():
    code = (
        "import sys, sweep_info\n"
        "info = sweep_info.system_info('cmd')\n"
        "assert info['packages']['torch'] and info['command'] == 'cmd', info\n"
        "assert not {'torch', 'jax', 'flax'} & set(sys.modules), 'a framework was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# REAL SWEEPS
def running(pid):
    """Whether process `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def read_lines(path):
    return path.read_text().splitlines() if path.exists() else []


def fake_repo(tmp_path, ppo_linen_source):
    """A copy of the sweep whose ppo_linen.py is `ppo_linen_source`."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("benchmark.sh", "sweep_info.py"):
        shutil.copy(REPO / name, repo / name)
    (repo / "ppo_linen.py").write_text(ppo_linen_source)
    return repo


TWO_LINEN_RUNS = r"(warmup|exp2)__ppo_linen__jit__CartPole-v1__small__"


@pytest.mark.slow
@pytest.mark.skipif(not (REPO / "ppo_linen.py").exists(), reason="ppo_linen.py is not written yet")
def test_tiny_real_sweep_records_finished_runs_and_the_machine_then_a_rerun_skips_them(tmp_path):
    out = tmp_path / "sweep"
    stale = out / "runs" / "exp2" / "exp2__ppo_linen__jit__CartPole-v1__small__1" / "stale-partial-file"
    stale.parent.mkdir(parents=True)
    stale.touch()
    result = benchmark("--filter", TWO_LINEN_RUNS, "--iterations", "2", "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    names = ["warmup__ppo_linen__jit__CartPole-v1__small__1", "exp2__ppo_linen__jit__CartPole-v1__small__1"]
    assert read_lines(out / "finished.txt") == names
    assert not (out / "failed.txt").exists()
    assert not stale.exists()  # an earlier attempt's leftovers are cleaned
    for name in names:
        exp = name.split("__")[0]
        assert len(list((out / "runs" / exp / name).glob("events.out.tfevents.*"))) == 1
        assert (out / "logs" / exp / f"{name}.log").exists()
    assert "[2/2] exp2 ppo_linen jit CartPole-v1 small seed 1" in result.stdout

    system = json.loads((out / "system.json").read_text())
    assert set(system["packages"]) == {"jax", "jaxlib", "flax", "optax", "gymnax", "torch", "tyro", "tensorboard", "numpy"}
    assert system["cpu"] and system["hostname"] and system["date"]
    assert shlex.split(system["command"])[1:] == ["--filter", TWO_LINEN_RUNS, "--iterations", "2", "--out", str(out)]
    timing = json.loads((out / "env_timing.json").read_text())
    assert (timing["num_envs"], timing["num_steps"]) == (32, 256)
    assert list(timing["envs"]) == ["CartPole-v1"]  # only the envs of the selected runs
    assert timing["envs"]["CartPole-v1"]["relative"] == 1.0
    assert 0 < timing["envs"]["CartPole-v1"]["step_seconds"] < 0.1

    event_files = sorted(out.glob("runs/*/*/events.out.tfevents.*"))
    mtimes = [path.stat().st_mtime for path in event_files]
    rerun = benchmark("--filter", TWO_LINEN_RUNS, "--iterations", "2", "--out", str(out))
    assert rerun.returncode == 0
    assert "2 already finished, 0 to run" in rerun.stdout
    assert read_lines(out / "finished.txt") == names
    assert [path.stat().st_mtime for path in sorted(out.glob("runs/*/*/events.out.tfevents.*"))] == mtimes


# A fake ppo_linen.py, by experiment: warmup fails with exit status 3, exp1 exits 0 without
# writing time/total, exp2 sleeps past the --timeout; all three run in one sweep.
FAULTY_SCRIPT = """
import sys, time
run_name = sys.argv[sys.argv.index("--run-name") + 1]
if run_name.startswith("warmup"):
    sys.exit("fake failure")
if run_name.startswith("exp2"):
    time.sleep(120)
"""
FAULTY_RUNS = [
    ("warmup__ppo_linen__jit__CartPole-v1__small__1", "1"),
    ("exp1__ppo_linen__jit__CartPole-v1__small__1", "incomplete"),
    ("exp2__ppo_linen__jit__CartPole-v1__small__1", "timeout"),
]


@pytest.fixture(scope="module")
def faulty_sweep(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("faulty")
    repo = fake_repo(tmp_path, FAULTY_SCRIPT)
    out = tmp_path / "sweep"
    start = time.monotonic()
    result = benchmark("--filter", "ppo_linen__jit__CartPole-v1__small__", "--timeout", "3", "--out", str(out), repo=repo)
    return result, out, time.monotonic() - start


def failed_lines(out):
    return [line.split(" ") for line in read_lines(out / "failed.txt")]


def test_a_failing_run_is_recorded_with_its_exit_status_and_its_log_kept(faulty_sweep):
    _, out, _ = faulty_sweep
    name, status, log = failed_lines(out)[0]
    assert (name, status) == FAULTY_RUNS[0]
    assert log == f"logs/warmup/{name}.log"
    assert "fake failure" in (out / log).read_text()


def test_the_sweep_goes_on_after_failures_and_exits_1_listing_them(faulty_sweep):
    result, out, _ = faulty_sweep
    assert [(name, status) for name, status, _ in failed_lines(out)] == FAULTY_RUNS
    assert read_lines(out / "finished.txt") == []
    assert result.returncode == 1
    assert "0 runs finished, 3 failed" in result.stdout
    for name, _ in FAULTY_RUNS:
        assert name in result.stdout.split("failed runs")[1]


def test_a_run_exiting_0_without_time_total_is_recorded_incomplete_not_finished(faulty_sweep):
    _, out, _ = faulty_sweep
    name, status, log = failed_lines(out)[1]
    assert (name, status) == FAULTY_RUNS[1]
    assert "no time/total scalar" in (out / log).read_text()


def test_a_run_exceeding_the_timeout_is_stopped_and_recorded_as_timeout(faulty_sweep):
    _, out, seconds = faulty_sweep
    assert tuple(failed_lines(out)[2][:2]) == FAULTY_RUNS[2]
    assert seconds < 100  # the 120 s sleep was cut short


def test_ctrl_c_stops_the_running_child_and_records_nothing(tmp_path):
    repo = fake_repo(tmp_path, "import os, sys, time\nprint(os.getpid(), flush=True)\ntime.sleep(120)\n")
    out = tmp_path / "sweep"
    log = out / "logs" / "warmup" / "warmup__ppo_linen__jit__CartPole-v1__small__1.log"
    sweep = subprocess.Popen(
        ["bash", str(repo / "benchmark.sh"), "--filter", "warmup", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHON": sys.executable},
    )
    deadline = time.monotonic() + 60
    while not log.exists() or not log.read_text().strip():
        assert time.monotonic() < deadline and sweep.poll() is None, "the fake run never started"
        time.sleep(0.2)
    child = int(log.read_text())
    sweep.send_signal(signal.SIGINT)
    _, stderr = sweep.communicate(timeout=30)
    assert sweep.returncode == 130
    assert "interrupted during warmup__ppo_linen__jit__CartPole-v1__small__1" in stderr
    assert not running(child)
    assert read_lines(out / "finished.txt") == []
    assert read_lines(out / "failed.txt") == []
