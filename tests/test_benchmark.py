"""benchmark.sh and its planner (the sweep package): the grid it lists (dry runs) and how it runs, records and
resumes a sweep."""

import contextlib
import io
import itertools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from sweep import __main__ as planner, estimate, experiments, handover, machine as machine_module, variants
from sweep import options as cli_options
from sweep.runs import describe
from sweep.plan import Plan

REPO = Path(__file__).resolve().parents[1]
ENVS = list(experiments.GRID_ENVS)  # the 12 envs in grid order; docs/method.md lists them (tested below)
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
EAGER = {("ppo_linen", "none"), ("ppo_nnx", "none"), ("ppo_torch", "none")}
# added since the study: in the default grid
NEW_PAIRS = [("ppo_nnx_tree", "tree"), ("ppo_equinox", "none"), ("ppo_equinox", "jit")]
NEW_COMPILED = [("ppo_nnx_tree", "tree"), ("ppo_equinox", "jit")]
SCAN_COMPILED = ("ppo_linen_scan", "scan")  # in exp1 alone
BACKEND_VARIANTS = [("ppo_torch", "env-jit"), ("ppo_linen", "jit"), ("ppo_torch_gymnasium", "eager"),
                    ("ppo_linen_gymnasium", "jit"), ("ppo_torch_native", "eager")]
CLASSIC_ONLY = ("ppo_torch_gymnasium", "ppo_linen_gymnasium", "ppo_torch_native")  # CartPole, Acrobot, MountainCar
REFERENCE_WORKLOAD = {"--num-envs": "32", "--num-steps": "256", "--update-epochs": "10", "--num-minibatches": "8"}
# exp8, DQN: the seven DQN scripts (one env) and dqn_linen at 16 envs, on two envs, and the five on gymnax (one env)
# on Breakout-MinAtar, seeds 1-3 whatever --repeats; the DQN workload (CleanRL's 500,000 transitions, 50 iterations of
# 10,000, a replay memory of 10,000), on Breakout-MinAtar its own (200,000 in 20 iterations, a replay memory of 100,000)
EXP8_VARIANTS = [("dqn_torch_gymnasium", "eager"), ("dqn_linen_gymnasium", "jit"), ("dqn_torch", "env-jit"),
                 ("dqn_linen", "jit"), ("dqn_torch_compile", "compile"), ("dqn_nnx", "tree"), ("dqn_equinox", "jit")]
EXP8_ENVS = ["CartPole-v1", "Acrobot-v1"]
EXP8_MINATAR = "Breakout-MinAtar"
EXP8_MINATAR_VARIANTS = [("dqn_torch", "env-jit"), ("dqn_linen", "jit"), ("dqn_torch_compile", "compile"),
                         ("dqn_nnx", "tree"), ("dqn_equinox", "jit")]
DQN_WORKLOAD = {"--num-envs": None, "--total-timesteps": "500000", "--iteration-steps": "10000",
                "--learning-starts": "10000", "--buffer-size": "10000"}
DQN_MINATAR_WORKLOAD = {"--num-envs": None, "--total-timesteps": "200000", "--iteration-steps": "10000",
                        "--learning-starts": "10000", "--buffer-size": "100000"}
QUICK_WORKLOAD = {"--num-envs": "32", "--num-steps": "32", "--update-epochs": "2", "--num-minibatches": "4"}
# exp5, the number of envs: its variants (the "-vector" modes on Gymnasium's NumPy-vectorised env), envs and N
EXP5_VARIANTS = [("ppo_linen", "jit"), ("ppo_nnx_cached", "cached"), ("ppo_nnx_tree", "tree"), ("ppo_equinox", "jit"),
                 ("ppo_torch", "env-jit"), ("ppo_torch_compile", "compile"), ("ppo_torch_gymnasium", "eager"),
                 ("ppo_torch_gymnasium", "eager-vector"), ("ppo_linen_gymnasium", "jit"),
                 ("ppo_linen_gymnasium", "jit-vector"), ("ppo_torch_native", "eager"), ("ppo_torch_native", "compile")]
EXP5_N = [8, 32, 128, 512, 2048]
EXP5_LOOP_MAX_N = 512  # Gymnasium's Python loop over its envs (the modes without "-vector") up to this N
EXP5_SYNC_AT_LARGEST = [("ppo_linen", "jit"), ("ppo_torch", "env-jit")]  # synchronised at the largest N too
QUICK_EXP5_VARIANTS = [("ppo_linen", "jit"), ("ppo_torch", "env-jit"), ("ppo_torch_gymnasium", "eager"),
                       ("ppo_linen_gymnasium", "jit-vector"), ("ppo_torch_native", "compile")]
QUICK_EXP5_N = [8, 32, 128]
# exp6, many agents: one scan process for N agents against N processes of each process variant, on these envs
EXP6_SCAN = ("ppo_linen_scan", "scan")
EXP6_PROCESS_VARIANTS = [("ppo_linen", "jit"), ("ppo_torch", "env-jit")]
EXP6_SCAN_N = [1, 2, 4, 8, 16, 32]
EXP6_PROCESS_N = [1, 2, 4, 8]
EXP6_ENVS = ["CartPole-v1", "Breakout-MinAtar"]
# exp7, model sizes: the fully compiled variants, torch env-jit and NNX graph mode, small (seeds 1-3) and large on
# EXP7_ENVS, medium on all 12, synchronised on CartPole-v1 at each size (not scan; at large only EXP7_SYNC_AT_LARGE)
EXP7_VARIANTS = [("ppo_linen", "jit"), ("ppo_nnx_cached", "cached"), ("ppo_nnx_tree", "tree"), ("ppo_equinox", "jit"),
                 ("ppo_torch_compile", "compile"), ("ppo_linen_scan", "scan"), ("ppo_torch", "env-jit"),
                 ("ppo_nnx", "jit")]
EXP7_ENVS = ["CartPole-v1", "Breakout-MinAtar", "Asterix-MinAtar"]
EXP7_SYNC_AT_LARGE = [("ppo_linen", "jit"), ("ppo_torch", "env-jit")]
QUICK_EXP7_VARIANTS = [("ppo_linen", "jit"), ("ppo_torch", "env-jit")]
CORES = len(os.sched_getaffinity(0))  # what benchmark.sh, started from here, may use: its processes at a time


def benchmark(*args, repo=REPO, env=None, shell="bash", **kwargs):
    """Run benchmark.sh with ARGS; `env` adds variables to this process's, a None value removes one. The memory
    check sees 1 TiB available unless `env` says otherwise, so that no test depends on what else runs here."""
    env = {**os.environ, "PYTHON": sys.executable, "BENCHMARK_MEM_AVAILABLE_KB": str(2**30), **(env or {})}
    env = {name: value for name, value in env.items() if value is not None}
    return subprocess.run(
        [shell, str(repo / "benchmark.sh"), *args], capture_output=True, text=True, env=env, timeout=300, **kwargs
    )


def planned(*args, env=None):
    """What `benchmark.sh ARGS` answers before its loop (--help, a dry run, a refused option) as a completed process,
    from the planner's `plan` command called in this process as benchmark.sh calls it: no bash and no Python start-up
    (benchmark() runs the real thing, and tests/test_golden_dry_runs.py the real dry runs)."""
    environ = {"PYTHON": sys.executable, "BENCHMARK_MEM_AVAILABLE_KB": str(2**30), **(env or {})}
    stdout, stderr, cwd = io.StringIO(), io.StringIO(), os.getcwd()
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch, contextlib.chdir(REPO), \
            contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        for name, value in environ.items():
            patch.delenv(name, raising=False) if value is None else patch.setenv(name, value)
        try:
            status = planner.main(["plan", folder, cwd, shlex.join([str(REPO / "benchmark.sh"), *args]), "--", *args])
        except SystemExit as stop:
            status = stop.code if isinstance(stop.code, int) else 2
    return subprocess.CompletedProcess(["benchmark.sh", *args], status, stdout.getvalue(), stderr.getvalue())


def dry_run(*args, repo=REPO):
    """The runs of `benchmark.sh --dry-run ARGS` as dicts: index, exp, argv and the fields of the command. An exp6
    group's run_name is the group's (its --log-dir's folder), with its agents, processes, how many run at a time
    (parallel), its --seed and --run-name as written (a group of processes: ranges) and its first seed."""
    result = planned("--dry-run", *args) if repo == REPO else benchmark("--dry-run", *args, repo=repo)
    assert result.returncode == 0, result.stderr
    return parse_dry_run(result.stdout)


def parse_dry_run(stdout):
    runs = []
    for line in stdout.splitlines():
        index, exp, *argv = shlex.split(line)
        processes = parallel = 1
        if argv[1] == "x":  # an exp6 group of processes: "<N> x <command>, <P> at a time"
            processes, parallel, argv = int(argv[0]), int(argv[-4]), argv[2:-4]
            argv[-1] = argv[-1].removesuffix(",")
        options = {word: argv[i + 1] for i, word in enumerate(argv[:-1]) if word.startswith("--")}
        flags = [word for word in argv if word in FLAGS]
        run_name = Path(options["--log-dir"]).name if exp == "exp6" else options["--run-name"]
        if "--total-timesteps" in options:  # exp8's DQN runs: iterations of --iteration-steps transitions
            iterations = int(options["--total-timesteps"]) // int(options["--iteration-steps"])
            workload = {key: options[key] for key in DQN_WORKLOAD}
        else:
            iterations, workload = int(options["--num-iterations"]), {key: options[key] for key in REFERENCE_WORKLOAD}
        mode = run_name.split("__")[2]
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
                "seed": int(options["--seed"].split("..")[0]),
                "sync": "--sync-timing" in argv,
                "iterations": iterations,
                "workload": workload,
                "num_envs": int(options["--num-envs"]),
                "vectorization": options.get("--vectorization"),
                "log_dir": options["--log-dir"],
                "run_name": run_name,
                "agents": int(options.get("--num-seeds", processes)),
                "processes": processes,
                "parallel": parallel,
                "seed_option": options["--seed"],
                "run_name_option": options["--run-name"],
            }
        )
    return runs


def configs(runs, exp):
    return Counter((r["script"], r["mode"], r["env"], r["size"]) for r in runs if r["exp"] == exp)


def exp5_configs(runs):
    return Counter((r["script"], r["mode"], r["env"], r["num_envs"], r["sync"]) for r in runs if r["exp"] == "exp5")


def exp5_has(script, mode, env, n):
    """Whether exp5 runs the variant on env with n envs: the scripts of three envs on CartPole-v1 only, the Gymnasium
    scripts' Python loop over the envs up to EXP5_LOOP_MAX_N."""
    loop_covers = not script.endswith("_gymnasium") or mode.endswith("-vector") or n <= EXP5_LOOP_MAX_N
    return script not in CLASSIC_ONLY or env == "CartPole-v1" and loop_covers


def expected_exp5(variants, counts=EXP5_N, envs=("CartPole-v1", "Breakout-MinAtar")):
    """exp5's (script, mode, env, N, sync) for these variants: async at every N on every env a script has,
    synchronised on CartPole-v1 at the first N and, those of EXP5_SYNC_AT_LARGEST, at the largest N they have."""
    runs = [(s, m, env, n, False) for env, n, (s, m) in itertools.product(envs, counts, variants)
            if exp5_has(s, m, env, n)]
    for s, m in variants:
        ns = [n for n in counts if exp5_has(s, m, "CartPole-v1", n)]
        runs += [(s, m, "CartPole-v1", n, True) for n in [ns[0]] + [ns[-1]] * ((s, m) in EXP5_SYNC_AT_LARGEST)]
    return Counter(runs)


def exp7_configs(runs):
    return Counter((r["script"], r["mode"], r["env"], r["size"], r["sync"], r["seed"]) for r in runs if r["exp"] == "exp7")


def expected_exp7(variants, envs=EXP7_ENVS, medium_envs=ENVS, seeds=3):
    """exp7's (script, mode, env, size, sync, seed) for these variants: small with `seeds` seeds and large on envs,
    medium on medium_envs, and synchronised on CartPole-v1 at each size (at large: EXP7_SYNC_AT_LARGE's only)."""
    runs = [(s, m, e, "small", False, seed) for seed in range(1, seeds + 1) for e in envs for s, m in variants]
    runs += [(s, m, e, "medium", False, 1) for e in medium_envs for s, m in variants]
    runs += [(s, m, e, "large", False, 1) for e in envs for s, m in variants]
    runs += [(s, m, "CartPole-v1", z, True, 1) for z in SIZES for s, m in variants
             if m != "scan" and (z != "large" or (s, m) in EXP7_SYNC_AT_LARGE)]
    return Counter(runs)


ENV_TIMING = "def env_timing(env_ids, num_envs: int = 32, num_steps: int = 256, repeats: int = 5) -> dict:\n"
UNTIMED_ENVS = ('    return {"num_envs": num_envs, "num_steps": num_steps, "repeats": 0,\n'
                '            "device": "none: a fake repository",\n'
                '            "envs": {env_id: {"step_seconds": 1e-6, "relative": 1.0} for env_id in env_ids}}\n')


def fake_repo(tmp_path, scripts, data=()):
    """A copy of the sweep (benchmark.sh, its planner, the SLURM template) with the given {file name: source} as its
    scripts; `data`: (old, new) replacements in the planner's data, sweep/experiments.py."""
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    shutil.copy(REPO / "benchmark.sh", repo / "benchmark.sh")
    shutil.copy(REPO / "doors.py", repo / "doors.py")  # exp9's env: the sweep times every env of its grid
    for folder in ("sweep", "slurm"):
        shutil.copytree(REPO / folder, repo / folder, ignore=shutil.ignore_patterns("__pycache__"))
    # its sweeps time no env (each env's JAX step compiled and timed: seconds a sweep): env_timing.json says so; the
    # real sweep of test_tiny_real_sweep_records_finished_runs_and_the_machine_then_a_rerun_skips_them times them
    records = (repo / "sweep" / "records.py").read_text()
    assert records.count(ENV_TIMING) == 1
    (repo / "sweep" / "records.py").write_text(records.replace(ENV_TIMING, ENV_TIMING + UNTIMED_ENVS))
    source = (repo / "sweep" / "experiments.py").read_text()
    for old, new in data:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    (repo / "sweep" / "experiments.py").write_text(source)
    for name, source in scripts.items():
        (repo / name).write_text(source)
    return repo


def plan(*args, environ=None):
    """The planner's plan of `benchmark.sh ARGS`, in this process (2 cores, as the sweeps' tests assume)."""
    return Plan(list(args), "benchmark.sh", str(REPO), "python", 2, 2)


def assert_one_line_error(result, expected, status=2):
    assert result.returncode == status, result.stdout + result.stderr
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("benchmark.sh: "), result.stderr
    assert expected in result.stderr, result.stderr


# THE GRID
def test_study_grid_has_231_runs_with_the_published_count_per_experiment():
    runs = dry_run("--grid", "study")
    assert len(runs) == 231
    assert Counter(r["exp"] for r in runs) == {"warmup": 3, "exp1": 108, "exp2": 96, "exp3": 24}
    assert [r["index"] for r in runs] == list(range(1, 232))


def test_study_grid_is_the_published_product_for_each_experiment():
    runs = dry_run("--grid", "study")
    expected = {
        "warmup": itertools.product(COMPILED, ["CartPole-v1"], ["small"]),
        "exp1": itertools.product(COMPILED, ENVS, SIZES),
        "exp2": itertools.product(PAIRS, ENVS, ["small"]),
        "exp3": itertools.product(PAIRS, ["Acrobot-v1"], SIZES),
    }
    for exp, product in expected.items():
        assert configs(runs, exp) == Counter((s, m, e, z) for (s, m), e, z in product), exp
    assert all(r["sync"] == (r["exp"] in ("exp2", "exp3")) for r in runs)
    # every script, env, size and compile mode appears; envs in grid order
    assert {r["script"] for r in runs} == {s for s, _ in PAIRS}
    assert list(dict.fromkeys(r["env"] for r in runs if r["exp"] == "exp1")) == ENVS
    assert {(r["script"], r["mode"]) for r in runs} == set(PAIRS)
    assert {r["size"] for r in runs} == set(SIZES)


def test_the_grid_does_not_depend_on_which_scripts_are_in_the_repository(tmp_path):
    out = ["--out", str(tmp_path / "sweep")]
    assert [r["line"] for r in dry_run(*out, repo=fake_repo(tmp_path, {}))] == [r["line"] for r in dry_run(*out)]


def test_the_study_grid_is_the_start_of_the_default_grid_which_adds_nnx_tree_equinox_and_scan(tmp_path):
    runs = dry_run()
    study = dry_run("--grid", "study")
    without_index = lambda r: r["line"].split(" ", 1)[1]
    studied = [without_index(r) for r in runs if (r["script"], r["mode"]) in PAIRS and r["exp"] in ("warmup", "exp1",
                                                                                                    "exp2", "exp3")]
    assert studied == [without_index(r) for r in study]  # the study's runs in the study's order, the others between
    pairs, compiled = PAIRS + NEW_PAIRS, COMPILED + NEW_COMPILED + [SCAN_COMPILED]
    assert Counter(r["exp"] for r in runs if r["exp"] in ("warmup", "exp1", "exp2", "exp3")) == {
        "warmup": 3, "exp1": 12 * 3 * 6, "exp2": 12 * 11, "exp3": 3 * 11}
    assert configs(runs, "exp1") == Counter((s, m, e, z) for (s, m), e, z in itertools.product(compiled, ENVS, SIZES))
    assert configs(runs, "exp2") == Counter((s, m, e, "small") for (s, m), e in itertools.product(pairs, ENVS))
    assert configs(runs, "exp3") == Counter((s, m, "Acrobot-v1", z) for (s, m), z in itertools.product(pairs, SIZES))
    assert configs(runs, "warmup") == Counter((s, m, "CartPole-v1", "small") for s, m in COMPILED)
    flags = {(r["script"], r["mode"]): r["flags"] for r in runs}
    assert flags[("ppo_equinox", "none")] == ["--no-jit"]
    assert flags[("ppo_equinox", "jit")] == flags[("ppo_nnx_tree", "tree")] == []


def test_env_backend_experiment_exp4_is_in_the_default_grid_only():
    assert "exp4" not in {r["exp"] for r in dry_run("--grid", "study")}
    runs = dry_run()
    product = itertools.product(BACKEND_VARIANTS, ["CartPole-v1", "Acrobot-v1", "MountainCar-v0"], ["small", "medium"])
    assert configs(runs, "exp4") == Counter((s, m, e, z) for (s, m), e, z in product)
    exp4 = [r for r in runs if r["exp"] == "exp4"]
    assert not any(r["sync"] or r["flags"] for r in exp4)
    assert {r["iterations"] for r in exp4} == {100}
    assert {r["exp"] for r in dry_run("--only", "exp4", "--filter", "^exp4__")} == {"exp4"}


def exp5_name(script, mode, env, num_envs, sync, seed=1):
    return f"exp5__{script}__{mode}__{env}__small__n{num_envs}{'__sync' if sync else ''}__{seed}"


def test_exp5_runs_every_variant_at_every_number_of_envs_with_the_flags_its_name_says():
    runs = dry_run("--only", "exp5")
    exp5 = [r for r in runs if r["exp"] == "exp5"]
    # the Python loop of both Gymnasium scripts not at 2048 envs; synchronised: all 12 at 8 envs, 2 at 2048
    assert Counter(r["exp"] for r in runs) == {"warmup": 3, "exp5": 12 * 5 - 2 + 6 * 5 + 12 + 2}
    assert exp5_configs(exp5) == expected_exp5(EXP5_VARIANTS)
    per_env = {key: value for key, value in REFERENCE_WORKLOAD.items() if key != "--num-envs"}
    for r in exp5:
        assert r["run_name"] == exp5_name(r["script"], r["mode"], r["env"], r["num_envs"], r["sync"]), r["line"]
        assert r["vectorization"] == ("vector" if r["mode"].endswith("-vector") else None), r["line"]
        assert r["workload"] == {**per_env, "--num-envs": str(r["num_envs"])}, r["line"]
        assert (r["flags"], r["size"], r["iterations"]) == ([], "small", 12), r["line"]
    assert len({r["run_name"] for r in exp5}) == len(exp5)
    # the default grid holds the same runs, after exp1 to exp4 (and before exp6, the scan script's groups, exp7 to exp9)
    default = [r for r in dry_run() if r["exp"] not in ("exp6", "exp7", "exp8", "exp9")]
    assert [r["line"] for r in default if r["exp"] == "exp5"] == [r["line"] for r in exp5]
    assert [r["exp"] for r in default][-len(exp5):] == ["exp5"] * len(exp5)


def test_exp5_iterations_option_sets_only_the_exp5_runs():
    runs = dry_run("--only", "exp5", "--exp5-iterations", "16", "--iterations", "50")
    assert {r["iterations"] for r in runs if r["exp"] == "exp5"} == {16}
    assert {r["iterations"] for r in runs if r["exp"] == "warmup"} == {50}


def test_exp5_runs_8192_envs_only_for_the_runs_listed_in_the_planners_data(monkeypatch):
    assert experiments.EXP5.LARGEST_RUNS == ()
    monkeypatch.setattr(experiments.Exp5, "LARGEST_RUNS", ((variants.LINEN, "CartPole-v1"),
                                                           (variants.TORCH, "Breakout-MinAtar")))
    runs = [run for run in plan("--only", "exp5").selected if run.config.exp == "exp5"]
    largest = [run.name for run in runs if run.config.num_envs == 8192]
    assert largest == [exp5_name("ppo_linen", "jit", "CartPole-v1", 8192, False),
                       exp5_name("ppo_torch", "env-jit", "Breakout-MinAtar", 8192, False)]
    others = Counter((c.script, c.mode, c.env, c.num_envs, c.timing == "sync") for c in (run.config for run in runs)
                     if c.num_envs != 8192)
    assert others == expected_exp5(EXP5_VARIANTS)


def test_quick_holds_a_reduced_exp5_on_cartpole_with_its_own_iterations():
    runs = dry_run("--quick")
    exp5 = [r for r in runs if r["exp"] == "exp5"]
    assert exp5_configs(exp5) == expected_exp5(QUICK_EXP5_VARIANTS, QUICK_EXP5_N, envs=("CartPole-v1",))
    per_env = {key: value for key, value in QUICK_WORKLOAD.items() if key != "--num-envs"}
    assert all(r["workload"] == {**per_env, "--num-envs": str(r["num_envs"])} for r in exp5)
    assert {r["iterations"] for r in exp5} == {12}
    # exp1 to exp4 (the scan variant's 3 in exp1), exp5
    assert len([r for r in runs if r["exp"] not in ("exp6", "exp7", "exp8", "exp9")]) == 53 + 22


def estimate_seconds(*args, env=None, repo=REPO):
    """The number of runs and the estimated seconds that `benchmark.sh --dry-run ARGS` prints."""
    result = planned("--dry-run", *args, env=env) if repo == REPO else benchmark("--dry-run", *args, env=env, repo=repo)
    match = re.search(r"^(\d+) runs.*; estimated time on a 2-core CPU: about (.+) \(rough", result.stderr, re.M)
    assert match, result.stderr
    units = {"days": 86400, "h": 3600, "min": 60, "s": 1}
    words = match[2].split()
    return int(match[1]), sum(int(number) * units[unit] for number, unit in zip(words[::2], words[1::2]))


def test_the_estimate_grows_with_each_runs_number_of_envs_and_exp5_takes_at_most_90_minutes():
    run = "^exp5__ppo_linen__jit__CartPole-v1__small__n{}__1$"
    seconds = [estimate_seconds("--filter", run.format(n))[1] for n in (8, 512, 2048)]
    assert 0 < seconds[0] < seconds[1] < seconds[2] and seconds[2] > 5 * seconds[0]
    # the model scaled to the measured exp5 runs, whose 90 of the grid before torch on envs in torch joined took 81
    # minutes in the sitting measured; its 12 runs add about 8 by the prior
    runs, seconds = estimate_seconds("--only", "exp5", "--filter", "^exp5__")
    assert runs == 102 and 80 * 60 <= seconds <= 100 * 60



# EXP7: model sizes
def exp7_name(script, mode, env, size, sync, seed=1):
    return f"exp7__{script}__{mode}__{env}__{size}{'__sync' if sync else ''}__{seed}"


def test_exp7_runs_each_variant_at_each_size_on_its_envs_and_seeds_with_the_flags_and_iterations_its_name_says():
    runs = [r for r in dry_run("--only", "exp7") if r["exp"] == "exp7"]
    assert exp7_configs(runs) == expected_exp7(EXP7_VARIANTS)
    assert len(runs) == 8 * (3 * 3 + 12 + 3) + 7 * 2 + 2 == 208
    for r in runs:
        assert r["run_name"] == exp7_name(r["script"], r["mode"], r["env"], r["size"], r["sync"], r["seed"]), r["line"]
        assert r["iterations"] == (12 if r["size"] == "large" else 100), r["line"]
        assert (r["workload"], r["num_envs"], r["agents"], r["flags"]) == (REFERENCE_WORKLOAD, 32, 1, []), r["line"]
    assert len({r["run_name"] for r in runs}) == len(runs)
    # the default grid holds the same runs, last but exp8's and exp9's (which follow each repeat's exp7 runs)
    default = [r for r in dry_run() if r["exp"] not in ("exp8", "exp9")]
    assert [r["line"] for r in default if r["exp"] == "exp7"] == [r["line"] for r in runs]
    assert [r["exp"] for r in default][-len(runs):] == ["exp7"] * len(runs)


def exp8_name(script, mode, env, num_envs, seed):
    return f"exp8__{script}__{mode}__{env}__small__n{num_envs}__{seed}"


def test_exp8_runs_the_seven_dqn_scripts_the_wide_linen_run_and_the_gymnax_ones_on_breakout_with_three_seeds():
    runs = [r for r in dry_run("--only", "exp8") if r["exp"] == "exp8"]
    expected = [(script, mode, env, 1) for env in EXP8_ENVS for script, mode in EXP8_VARIANTS]
    expected += [("dqn_linen", "jit", env, 16) for env in EXP8_ENVS]
    expected += [(script, mode, EXP8_MINATAR, 1) for script, mode in EXP8_MINATAR_VARIANTS]
    assert Counter((r["script"], r["mode"], r["env"], r["num_envs"]) for r in runs) == Counter(expected * 3)
    assert sorted(Counter(r["seed"] for r in runs).items()) == [(1, 21), (2, 21), (3, 21)]
    # per seed: each classic env's seven and its wide run, then Breakout-MinAtar's five
    assert [(r["env"], r["script"], r["num_envs"]) for r in runs if r["seed"] == 2] == [
        *((env, script, n) for env in EXP8_ENVS for script, n in [*((s, 1) for s, _ in EXP8_VARIANTS),
                                                                   ("dqn_linen", 16)]),
        *((EXP8_MINATAR, script, 1) for script, _ in EXP8_MINATAR_VARIANTS)]
    for r in runs:
        minatar = r["env"] == EXP8_MINATAR
        assert r["run_name"] == exp8_name(r["script"], r["mode"], r["env"], r["num_envs"], r["seed"]), r["line"]
        workload = DQN_MINATAR_WORKLOAD if minatar else DQN_WORKLOAD
        assert r["workload"] == {**workload, "--num-envs": str(r["num_envs"])}, r["line"]
        assert (r["iterations"], r["size"], r["flags"], r["sync"]) == (20 if minatar else 50, "small", [], False), \
            r["line"]
    assert len({r["run_name"] for r in runs}) == len(runs)
    # --repeats adds seeds beyond 3 only; the study grid has no exp8; --quick one seed of CartPole-v1, 10 iterations
    assert len([r for r in dry_run("--only", "exp8", "--repeats", "4") if r["exp"] == "exp8"]) == 4 * 21
    assert "exp8" not in {r["exp"] for r in dry_run("--grid", "study")}
    quick = [r for r in dry_run("--quick") if r["exp"] == "exp8"]
    assert [(r["script"], r["env"], r["seed"], r["iterations"]) for r in quick] == [
        (script, "CartPole-v1", 1, 10) for script, _ in [*EXP8_VARIANTS, ("dqn_linen", "jit")]]
    assert {(r["workload"]["--total-timesteps"], r["workload"]["--buffer-size"]) for r in quick} == {("20000", "10000")}


def test_exp8s_breakout_runs_are_planned_described_and_estimated_at_their_own_workload():
    sweep = plan("--only", "exp8", "--filter", "^exp8__dqn_linen__jit__(CartPole-v1|Breakout-MinAtar)__small__n1__1$")
    cartpole, breakout = [run for run in sweep.selected if run.config.exp == "exp8"]
    assert breakout.config.env == EXP8_MINATAR
    assert [sweep.workload.iterations_of(run.config) for run in (cartpole, breakout)] == [50, 20]
    assert describe(breakout, sweep.workload, 2).endswith("seed 1, 20 iterations")
    # ms per 10,000 transitions: DQN_PRIOR's, on a MinAtar env DQN_MINATAR_PERCENT of it (measured: 220)
    fixed_s, ms_per_10k = estimate.DQN_PRIOR[variants.DQN_LINEN.cost]
    assert estimate.DQN_MINATAR_PERCENT == 220
    assert sweep.prior_ms(cartpole.config) == fixed_s * 1000 + 50 * ms_per_10k
    assert sweep.prior_ms(breakout.config) == fixed_s * 1000 + 20 * ms_per_10k * 22 // 10


def test_exp8s_memory_estimate_adds_the_replay_memory_and_the_new_scripts_count_in_their_frameworks_family():
    everything = benchmark("--dry-run", "--only", "exp8", "--filter", "^exp8__.*__1$",
                           env={"BENCHMARK_MEM_AVAILABLE_KB": "1"})
    peaks = {name: peak for name, (peak, _) in refusals(everything.stderr).items()}
    assert len(peaks) == 21
    name = lambda script, mode, env: exp8_name(script, mode, env, 1, 1)
    # Breakout-MinAtar's replay memory: 100,000 x (2 observations x 400 float32 + 16 bytes), about 307 MiB more than
    # CartPole-v1's 10,000 small transitions
    for script, mode in EXP8_MINATAR_VARIANTS:
        assert peaks[name(script, mode, EXP8_MINATAR)] - peaks[name(script, mode, "CartPole-v1")] == pytest.approx(
            (100_000 * (2 * 400 * 4 + 16) - 10_000 * (2 * 4 * 4 + 16)) / 2**20, abs=1)
    for env in (*EXP8_ENVS, EXP8_MINATAR):
        linen, torch = peaks[name("dqn_linen", "jit", env)], peaks[name("dqn_torch", "env-jit", env)]
        assert peaks[name("dqn_nnx", "tree", env)] == peaks[name("dqn_equinox", "jit", env)] == linen
        assert peaks[name("dqn_torch_compile", "compile", env)] == torch > linen
    limit = peaks[name("dqn_linen", "jit", EXP8_MINATAR)] - 1  # MiB: every Breakout run is refused, no CartPole one
    result = benchmark("--dry-run", "--only", "exp8", "--filter", "^exp8__dqn_linen__jit__.*__n1__1$",
                       env={"BENCHMARK_MEM_AVAILABLE_KB": str(limit * 1024)})
    assert result.returncode == 0, result.stderr
    assert list(refusals(result.stderr)) == [name("dqn_linen", "jit", EXP8_MINATAR)]


def test_the_estimate_of_exp8_is_about_52_minutes():
    runs, seconds = estimate_seconds("--only", "exp8", "--filter", "^exp8__")
    assert runs == 63 and 51 * 60 <= seconds < 53 * 60


HELP = (REPO / "sweep" / "help.txt").read_text()
HOW_LONG = HELP.split("\nHow long, by the built-in cost model")[1].split("\nMeasured")[0]
# what each figure of help's How long block estimates: the planner's arguments, and the host's cores
HOW_LONG_SELECTIONS = {
    "--grid study": ["--grid", "study"], "the default grid": [], "--quick": ["--quick"],
    **{exp: ["--only", exp, "--filter", f"^{exp}__"] for exp in ("exp4", "exp5", "exp6", "exp7", "exp8", "exp9")},
    "--grid gpu": ["--grid", "gpu"], "--grid reference": ["--grid", "reference"],
}


@pytest.mark.parametrize("selection", HOW_LONG_SELECTIONS)
def test_every_estimate_the_help_gives_is_the_planners(selection):
    cores = 16 if selection == "--grid gpu" else 2  # the GPU figure is for a 16-core host, the others a 2-core CPU
    plan = Plan(HOW_LONG_SELECTIONS[selection], "benchmark.sh", str(REPO), "python", cores, cores)
    expected = plan.estimator.left(run.config for run in plan.selected)
    assert re.search(rf"(^|  ){re.escape(selection)}  {expected}( |$)", HOW_LONG, re.M), (selection, expected)


def test_the_help_gives_an_estimate_for_every_selection_it_names_and_nothing_else():
    named = re.findall(r"(?:^|  )(\S.*?)  about ", HOW_LONG, re.M)
    assert sorted(name.strip() for name in named) == sorted(HOW_LONG_SELECTIONS)


@pytest.mark.parametrize("grid_name", ["study", "default", "gpu", "reference"])
def test_every_run_count_the_help_gives_is_the_planners(grid_name):
    block = HELP.split(f"--grid {grid_name}")[1].split("\n--grid ")[0].split("\nEvery run of exp1")[0]
    counts = Counter(run["exp"] for run in dry_run("--grid", grid_name))
    listed = re.findall(r"^  (warmup|exp\d+)\s+(\d+) (?:runs?|groups)\b", block, re.M)
    totals = Counter()  # an experiment may stand on several lines (--grid gpu's priorities): their sum
    for exp, count in listed:
        totals[exp] += int(count)
    assert listed and all(counts[exp] == total for exp, total in totals.items()), (listed, counts)


def test_exp7_large_iterations_sets_only_exp7s_large_runs_and_never_above_iterations():
    runs = dry_run("--only", "exp7", "--exp7-large-iterations", "20")
    assert {(r["size"], r["iterations"]) for r in runs if r["exp"] == "exp7"} == {
        ("small", 100), ("medium", 100), ("large", 20)}
    runs = dry_run("--only", "exp7", "--iterations", "8")
    assert {r["iterations"] for r in runs} == {8}


def test_repeats_above_three_repeat_every_exp7_run_and_its_small_runs_keep_one_seed_per_repeat():
    runs = [r for r in dry_run("--only", "exp7", "--repeats", "4") if r["exp"] == "exp7"]
    once = expected_exp7(EXP7_VARIANTS, seeds=1)
    expected = Counter({(*key[:5], seed): count for key, count in once.items() for seed in range(1, 5)})
    assert exp7_configs(runs) == expected


def test_quick_holds_a_reduced_exp7_on_cartpole_of_linen_and_torch_at_each_size_with_two_small_seeds():
    runs = [r for r in dry_run("--quick") if r["exp"] == "exp7"]
    assert exp7_configs(runs) == expected_exp7(QUICK_EXP7_VARIANTS, ["CartPole-v1"], ["CartPole-v1"], seeds=2)
    assert {r["iterations"] for r in runs} == {10}
    assert all(r["workload"] == QUICK_WORKLOAD for r in runs)


def test_the_estimate_of_exp7_is_about_7_hours():
    runs, seconds = estimate_seconds("--only", "exp7", "--filter", "^exp7__")
    assert runs == 208 and 6 * 3600 <= seconds <= 8 * 3600


# EXP6: groups of N agents
def exp6_groups(runs):
    return Counter((r["script"], r["mode"], r["env"], r["agents"]) for r in runs if r["exp"] == "exp6")


def expected_exp6(scan_counts, process_counts, envs):
    groups = [(*EXP6_SCAN, env, n) for env in envs for n in scan_counts]
    groups += [(s, m, env, n) for env in envs for n in process_counts for s, m in EXP6_PROCESS_VARIANTS]
    return Counter(groups)


def exp6_name(script, mode, env, agents, seed=1):
    return f"exp6__{script}__{mode}__{env}__small__a{agents}__{seed}"


def test_exp6_is_in_the_default_grid_before_exp7():
    runs = dry_run()
    assert exp6_groups(runs) == expected_exp6(EXP6_SCAN_N, EXP6_PROCESS_N, EXP6_ENVS)
    assert sum(exp6_groups(runs).values()) == 28
    exps = [r["exp"] for r in runs if r["exp"] not in ("exp7", "exp8", "exp9")]
    assert exps[-28:] == ["exp6"] * 28 and [r["exp"] for r in runs].index("exp7") > exps.index("exp6")
    # per env, N ascending, the variants side by side at each N
    order = [(r["env"], r["agents"]) for r in runs if r["exp"] == "exp6"]
    assert order == sorted(order, key=lambda key: (EXP6_ENVS.index(key[0]), key[1]))
    assert "exp6" not in {r["exp"] for r in dry_run("--grid", "study")}


def test_the_scan_variant_joins_exp1_and_exp7_alone_as_a_fully_compiled_variant_of_one_agent(tmp_path):
    runs = [r for r in dry_run() if r["exp"] not in ("exp6", "exp9")]  # exp9: training on Doors, every design
    scan = [r for r in runs if (r["script"], r["mode"]) == SCAN_COMPILED]
    assert configs(scan, "exp1") == Counter((*SCAN_COMPILED, e, z) for e, z in itertools.product(ENVS, SIZES))
    assert {r["exp"] for r in scan} == {"exp1", "exp7"} and all(r["agents"] == 1 and r["flags"] == [] for r in scan)
    assert all("--num-seeds 1 " in r["line"] and "--sync-timing" not in r["line"] for r in scan)


def test_exp6_groups_name_their_agents_seeds_and_folders_and_run_as_many_processes_at_a_time_as_cores(tmp_path):
    out = tmp_path / "sweep"
    runs = dry_run("--only", "exp6", "--repeats", "2", "--iterations", "7", "--out", str(out))
    groups = [r for r in runs if r["exp"] == "exp6"]
    assert [r["seed"] for r in groups] == [1] * 28 + [1001] * 28  # repeats train disjoint seeds
    for r in groups:
        n, seed = r["agents"], r["seed"]
        assert r["run_name"] == exp6_name(r["script"], r["mode"], r["env"], n, seed)
        assert r["log_dir"] == str(out / "runs" / "exp6" / r["run_name"])
        assert (r["iterations"], r["workload"], r["size"], r["sync"]) == (7, REFERENCE_WORKLOAD, "small", False)
        seeds = f"{seed}..{seed + n - 1}" if n > 1 else str(seed)
        if (r["script"], r["mode"]) == EXP6_SCAN:  # one process: --num-seeds N, a run folder per agent
            assert (r["processes"], r["seed_option"]) == (1, str(seed))
            assert r["run_name_option"] == ("agent" if n > 1 else f"agent__seed{seed}"), r["line"]
        else:
            assert (r["processes"], r["parallel"]) == (n, min(n, CORES)), r["line"]
            assert (r["seed_option"], r["run_name_option"]) == (seeds, f"agent__seed{seeds}"), r["line"]
            assert r["line"].split()[2:4] == [str(n), "x"] and "--num-seeds" not in r["line"]


def test_quick_holds_exp6_on_cartpole_with_one_and_two_agents_of_the_quick_workload(tmp_path):
    runs = [r for r in dry_run("--quick") if r["exp"] == "exp6"]
    assert exp6_groups(runs) == expected_exp6([1, 2], [1, 2], ["CartPole-v1"])
    assert all(r["workload"] == QUICK_WORKLOAD and r["iterations"] == 10 for r in runs)


def test_only_exp6_keeps_its_groups_and_the_warmup_runs_and_filter_matches_group_names(tmp_path):
    repo = REPO
    assert Counter(r["exp"] for r in dry_run("--only", "exp6", repo=repo)) == {"warmup": 3, "exp6": 28}
    eight = dry_run("--filter", "__a8__", repo=repo)
    assert {r["exp"] for r in eight} == {"exp6"}
    assert exp6_groups(eight) == expected_exp6([8], [8], EXP6_ENVS)


def test_shards_and_so_slurm_tasks_take_each_exp6_group_whole_and_once(tmp_path):
    repo = REPO
    whole = [r["line"] for r in dry_run("--only", "exp6", "--filter", "^exp6__", repo=repo)]
    shards = [[r["line"] for r in dry_run("--only", "exp6", "--filter", "^exp6__", "--shard", f"{k}/3", repo=repo)]
              for k in (1, 2, 3)]
    assert [shard == whole[k::3] for k, shard in enumerate(shards)] == [True] * 3


def test_the_estimate_prices_a_scan_group_as_one_wider_process_and_a_process_group_as_waves_of_runs(tmp_path):
    repo = REPO
    ten = ["--iterations", "10"]  # short runs: the estimate stays in seconds, unrounded

    def seconds(regex):
        return estimate_seconds(*ten, "--filter", regex, repo=repo)[1]

    for script, mode in EXP6_PROCESS_VARIANTS:  # exp2 runs the same script and workload, one run
        one_run = seconds(f"^exp2__{script}__{mode}__CartPole-v1__small__1$")
        for n in (1, 8):
            waves = -(-n // CORES)
            assert waves * one_run <= seconds(f"^{exp6_name(script, mode, 'CartPole-v1', n)}$") <= waves * (one_run + 1)
    scan = [seconds(f"^{exp6_name(*EXP6_SCAN, 'CartPole-v1', n)}$") for n in (1, 8)]
    assert scan[0] < scan[1] < 8 * scan[0]  # one start-up for all 8 agents, 8 times the batch


# PEAK MEMORY: refused up front
def refusals(stderr):
    """{run name: (estimated MiB, available MiB)} of the "refusing" lines."""
    lines = re.findall(r"^benchmark.sh: refusing (\S+): estimated peak memory (\d+) MiB, (\d+) MiB available$", stderr, re.M)
    return {name: (int(peak), int(available)) for name, peak, available in lines}


def test_exp6_groups_that_would_not_fit_are_refused_beyond_the_largest_number_of_agents_that_fits(tmp_path):
    repo = REPO
    selection = ["--only", "exp6", "--filter", "^exp6__"]
    nothing = {"BENCHMARK_MEM_AVAILABLE_KB": "1"}
    peaks = {name: peak for name, (peak, _) in refusals(benchmark("--dry-run", *selection, repo=repo, env=nothing).stderr).items()}
    assert len(peaks) == 28
    runs = "^exp2__ppo_(linen__jit|torch__env-jit)__(CartPole-v1|Breakout-MinAtar)__small__1$"  # one process each
    one_run = {name: peak for name, (peak, _) in refusals(benchmark("--dry-run", "--filter", runs, env=nothing).stderr).items()}
    for env in EXP6_ENVS:
        for script, mode in EXP6_PROCESS_VARIANTS:  # the processes that run at once
            run = one_run[f"exp2__{script}__{mode}__{env}__small__1"]
            for n in EXP6_PROCESS_N:
                assert peaks[exp6_name(script, mode, env, n)] == pytest.approx(min(n, CORES) * run, abs=min(n, CORES))
        scan = [peaks[exp6_name(*EXP6_SCAN, env, n)] for n in EXP6_SCAN_N]  # one process, an N times wider batch
        assert scan[0] == one_run[f"exp2__ppo_linen__jit__{env}__small__1"] and scan == sorted(set(scan))
    limit = peaks[exp6_name(*EXP6_SCAN, "Breakout-MinAtar", 16)]  # MiB; a peak printed as `limit` MiB is below limit + 1
    result = benchmark("--dry-run", *selection, repo=repo, env={"BENCHMARK_MEM_AVAILABLE_KB": str((limit + 1) * 1024 - 1)})
    assert result.returncode == 0, result.stderr
    refused = refusals(result.stderr)
    assert set(refused) == {name for name, peak in peaks.items() if peak > limit}
    assert exp6_name(*EXP6_SCAN, "Breakout-MinAtar", 32) in refused
    assert len(result.stderr.splitlines()) == len(refused) + 1  # one line per refused group, and the estimate
    for name in refused:  # every larger group of the variant and env is refused too
        larger = name.split("__a")[0] + "__a{}__1"
        n = int(name.split("__a")[1].split("__")[0])
        assert all(larger.format(m) in refused for m in EXP6_SCAN_N if m > n and larger.format(m) in peaks)
    listed = {r["run_name"] for r in parse_dry_run(result.stdout)}
    assert listed == set(peaks) - set(refused)


def test_runs_above_the_available_memory_are_refused_up_front_one_line_each_and_not_listed():
    selection = ["--only", "exp5", "--filter", "^exp5__ppo_(linen|torch)__"]
    everything = benchmark("--dry-run", *selection, env={"BENCHMARK_MEM_AVAILABLE_KB": "1"})
    assert everything.returncode == 2 and everything.stdout == ""
    assert everything.stderr.splitlines()[-1] == "benchmark.sh: no selected run fits in the memory available (see the lines above)"
    peaks = {name: peak for name, (peak, _) in refusals(everything.stderr).items()}
    assert len(peaks) == len(everything.stderr.splitlines()) - 1 == 2 * (2 * 5 + 2)
    for script, mode in [("ppo_linen", "jit"), ("ppo_torch", "env-jit")]:  # more envs, larger observations: more memory
        for env in ("CartPole-v1", "Breakout-MinAtar"):
            assert sorted(peaks[exp5_name(script, mode, env, n, False)] for n in EXP5_N) == \
                [peaks[exp5_name(script, mode, env, n, False)] for n in EXP5_N]
        assert peaks[exp5_name(script, mode, "Breakout-MinAtar", 2048, False)] > \
            peaks[exp5_name(script, mode, "CartPole-v1", 2048, False)] + 1000
    limit = sorted(peaks.values())[len(peaks) // 2]  # MiB; a peak printed as `limit` MiB is below limit + 1
    result = benchmark("--dry-run", *selection, env={"BENCHMARK_MEM_AVAILABLE_KB": str((limit + 1) * 1024 - 1)})
    assert result.returncode == 0, result.stderr
    refused = refusals(result.stderr)
    assert set(refused) == {name for name, peak in peaks.items() if peak > limit} != set()
    assert {available for _, available in refused.values()} == {limit}
    listed = [shlex.split(line)[-1] for line in result.stdout.splitlines()]
    assert not set(listed) & set(refused) and set(peaks) - set(refused) <= set(listed)
    assert f"runs ({len(refused)} refused: memory); estimated time" in result.stderr


def test_without_the_override_the_memory_available_is_memavailable(monkeypatch, capsys):
    meminfo = Path("/proc/meminfo")
    if not meminfo.exists():
        pytest.skip("no /proc/meminfo here: benchmark.sh checks no memory")
    # a run too large for any machine: 819,200 x 256 steps of Breakout
    monkeypatch.setattr(experiments.Exp5, "LARGEST_NUM_ENVS", 819200)
    monkeypatch.setattr(experiments.Exp5, "LARGEST_RUNS", ((variants.LINEN, "Breakout-MinAtar"),))
    sweep = plan("--only", "exp5")
    sweep.refuse_oversized({})
    [(name, (_, available))] = refusals(capsys.readouterr().err).items()
    assert name == exp5_name("ppo_linen", "jit", "Breakout-MinAtar", 819200, False) and list(sweep.refused) == [name]
    [kib] = [int(line.split()[1]) for line in meminfo.read_text().splitlines() if line.startswith("MemAvailable:")]
    assert available == pytest.approx(kib / 1024, rel=0.25)  # what else runs here moves it a little


@pytest.mark.parametrize("value", ["lots", "0", "-5", "1.5"])
def test_a_bad_memory_override_fails_with_one_line(value):
    result = benchmark("--dry-run", env={"BENCHMARK_MEM_AVAILABLE_KB": value})
    assert_one_line_error(result, "BENCHMARK_MEM_AVAILABLE_KB needs a positive number of KiB")


def test_the_grid_envs_are_the_twelve_that_docs_method_md_lists_in_grid_order():
    text = " ".join((REPO / "docs" / "method.md").read_text().split())
    listed = re.search(r"The 12 envs, in grid order \(.*?\): (.*?)\. Sizes", text)[1].split(", ")
    assert listed == ENVS and len(ENVS) == 12


def test_the_grid_envs_come_from_one_list_in_the_planners_data(monkeypatch):
    monkeypatch.setattr(experiments, "GRID_ENVS", experiments.GRID_ENVS[:-1])
    runs = plan("--grid", "study").selected
    assert list(dict.fromkeys(run.config.env for run in runs if run.config.exp == "exp1")) == ENVS[:-1]
    named_by_the_grid = {"CartPole-v1", "Acrobot-v1", "MountainCar-v0", "DiscountingChain-bsuite", "Breakout-MinAtar",
                         "Asterix-MinAtar"}
    sources = [REPO / "benchmark.sh"] + [path for path in (REPO / "sweep").glob("*.py") if path.name != "experiments.py"]
    for env in set(ENVS) - named_by_the_grid:  # (warm-up, exp3 to exp7 and --quick name theirs) no copy of the list
        assert not [path.name for path in sources if env in path.read_text()], env


def test_each_compile_mode_passes_its_flag_and_the_defaults_pass_none():
    for r in dry_run("--grid", "study"):
        expected = [MODE_FLAGS[(r["script"], r["mode"])]] if (r["script"], r["mode"]) in MODE_FLAGS else []
        assert r["flags"] == expected, r["line"]


def test_runs_have_explicit_seed_run_name_log_dir_and_workload(tmp_path):
    out = tmp_path / "sweep"
    runs = dry_run("--grid", "study", "--out", str(out))
    for r in runs:
        assert r["run_name"] == f"{r['exp']}__{r['script']}__{r['mode']}__{r['env']}__{r['size']}__{r['seed']}"
        assert r["log_dir"] == str(out / "runs" / r["exp"])
        assert r["seed"] == 1
        assert r["workload"] == REFERENCE_WORKLOAD
        assert r["python"] == sys.executable  # $PYTHON
    assert len({r["run_name"] for r in runs}) == len(runs)


def test_eager_runs_do_10_iterations_and_the_others_100_by_default():
    runs = dry_run("--grid", "study")
    for r in runs:
        assert r["iterations"] == (10 if (r["script"], r["mode"]) in EAGER else 100), r["line"]
    assert sum((r["script"], r["mode"]) in EAGER for r in runs) == 45


def test_eager_iterations_option_sets_only_the_eager_runs():
    runs = dry_run("--grid", "study", "--eager-iterations", "3", "--iterations", "50")
    assert {r["iterations"] for r in runs if (r["script"], r["mode"]) in EAGER} == {3}
    assert {r["iterations"] for r in runs if (r["script"], r["mode"]) not in EAGER} == {50}
    assert {r["iterations"] for r in dry_run("--grid", "study", "--iterations", "7")} == {7}  # eager: min(10, 7)
    quick = dry_run("--quick", "--iterations", "3")
    assert {r["iterations"] for r in quick if r["exp"] not in ("exp5", "exp8") and r["script"].startswith("ppo_")} == {3}
    assert {r["iterations"] for r in quick if r["script"].startswith("dqn_")} == {10}  # the DQN workload is its own
    assert {r["iterations"] for r in quick if r["exp"] == "exp5"} == {12}  # exp5's own: --exp5-iterations


def test_eager_runs_keep_the_per_iteration_workload_of_the_others():
    runs = dry_run("--grid", "study")
    assert {tuple(r["workload"].items()) for r in runs} == {tuple(REFERENCE_WORKLOAD.items())}


def test_relative_out_is_made_absolute_from_the_callers_directory(tmp_path):
    result = benchmark("--dry-run", "--out", "rel/sweep", "--only", "exp3", cwd=tmp_path)
    assert f"--log-dir {tmp_path}/rel/sweep/runs/warmup " in result.stdout.splitlines()[0]


def test_repeats_2_doubles_the_grid_with_seeds_1_and_2():
    runs = dry_run("--grid", "study", "--repeats", "2")
    assert len(runs) == 462
    assert len({r["run_name"] for r in runs}) == 462
    assert [r["seed"] for r in runs] == [1] * 231 + [2] * 231
    config = [(r["exp"], r["script"], r["mode"], r["env"], r["size"]) for r in runs]
    assert config[:231] == config[231:]  # the same grid in the same order, once per seed


@pytest.mark.parametrize("n", [1, 2, 7])
def test_shards_partition_the_grid_and_each_gets_the_warmup_runs(n):
    grid = dry_run("--grid", "study")
    warmup = [r["line"] for r in grid if r["exp"] == "warmup"]
    rest = [r["line"] for r in grid if r["exp"] != "warmup"]
    shards = [benchmark("--dry-run", "--grid", "study", "--shard", f"{k}/{n}").stdout.splitlines() for k in range(1, n + 1)]
    for k, shard in enumerate(shards):
        assert shard[:3] == warmup
        assert shard[3:] == rest[k::n]
    assert sorted(itertools.chain(*(shard[3:] for shard in shards))) == sorted(rest)  # no overlap, no loss


def test_filter_keeps_exactly_the_runs_whose_name_matches():
    grid = dry_run("--grid", "study")
    regex = r"ppo_torch_compile.*(Breakout|Acrobot)"
    runs = dry_run("--grid", "study", "--filter", regex)
    assert [r["line"] for r in runs] == [r["line"] for r in grid if re.search(regex, r["run_name"])]
    assert Counter(r["exp"] for r in runs) == {"exp1": 6, "exp2": 2, "exp3": 3}


def test_filter_matches_neither_the_output_folder_nor_python(tmp_path):
    python = tmp_path / "large" / "python"
    python.parent.mkdir()
    python.symlink_to(sys.executable)
    result = subprocess.run(
        ["bash", str(REPO / "benchmark.sh"), "--dry-run", "--grid", "study", "--out", str(tmp_path / "large-cpu"),
         "--filter", "large"],
        capture_output=True, text=True, env={**os.environ, "PYTHON": str(python)}, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    sizes = Counter(shlex.split(line)[shlex.split(line).index("--model-size") + 1] for line in result.stdout.splitlines())
    assert sizes == {"large": 36 + 8}
    # the filter sees fields of the name only: no "--sync-timing", no flag, no iteration count
    assert benchmark("--dry-run", "--filter", "sync-timing").returncode == 2
    assert benchmark("--dry-run", "--filter", "no-jit").returncode == 2


def test_only_keeps_one_experiment_and_the_warmup_runs():
    for exp, count in [("exp1", 108), ("exp2", 96), ("exp3", 24)]:
        runs = dry_run("--grid", "study", "--only", exp)
        assert Counter(r["exp"] for r in runs) == {"warmup": 3, exp: count}
    assert {r["exp"] for r in dry_run("--only", "exp2", "--filter", "^exp2__")} == {"exp2"}


FAKE_COMMAND_SET = "import json, sys\nopen(sys.argv[1] + '.argv', 'w').write(json.dumps(sys.argv[1:]))\nsys.exit(3)\n"


def test_only_of_a_command_set_runs_it_on_out_with_its_own_options_and_passes_its_exit_status(tmp_path, monkeypatch):
    tool, out = tmp_path / "fake_set.py", tmp_path / "out"
    tool.write_text(FAKE_COMMAND_SET)  # records its arguments, exits 3
    monkeypatch.setattr(experiments.BY_NAME["exp11"], "command_set", str(tool))
    result = planned("--only", "exp11", "--out", str(out), "--", "--trials", "3")
    assert result.returncode == 3 and result.stdout.startswith("exp11 is a command set of its own, run as: ")
    assert json.loads((tmp_path / "out.argv").read_text()) == [str(out), "--trials", "3"]
    assert planned("--only", "exp11", "--dry-run", "--out", str(out)).returncode == 3
    assert json.loads((tmp_path / "out.argv").read_text()) == [str(out), "--dry-run"]


def test_only_of_a_command_set_with_a_dry_run_gives_its_plan_and_estimate_and_writes_nothing(tmp_path, capfd):
    result = planned("--only", "exp10", "--dry-run", "--out", str(tmp_path / "out"), "--", "--trials", "5")
    assert result.returncode == 0, capfd.readouterr().err
    plan = r"^exp10: parts a,b,p of study seeds 1,2,3, 5 trials a study .* about \d+ min"
    assert re.search(plan, capfd.readouterr().out, re.M)
    assert not (tmp_path / "out").exists()


def test_only_of_a_command_set_refuses_the_sweeps_other_options_with_one_line():
    for option in (["--repeats", "2"], ["--quick"], ["--slurm", "2"]):
        result = planned("--only", "exp13", *option)
        assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
        assert result.stderr.startswith(f"benchmark.sh: --only exp13 hands the invocation over to its command set, "
                                        f"tools/exp13.py, which takes --out, --dry-run and its own options after --, "
                                        f"not {option[0]}")


def test_every_command_set_is_a_tool_here_that_takes_its_folder_and_dry_run_and_has_a_report_module():
    named = [experiment for experiment in experiments.BY_NAME.values() if experiment.command_set]
    assert {experiment.name for experiment in named} == {"exp10", "exp11", "exp12", "exp13", "exp14", "exp15"}
    for experiment in named:
        source = (REPO / experiment.command_set).read_text()
        assert "--dry-run" in source and experiment.name in "".join(source.splitlines()[:3]), experiment.name
        assert f"report.{experiment.report_module}" in source, experiment.name  # the report it ends with
        assert (REPO / "report" / f"{experiment.report_module}.py").is_file()


def test_exp12_and_exp14_go_to_their_command_sets_but_on_the_gpu_grid_which_holds_their_runs():
    for exp in ("exp12", "exp14"):
        assert handover.handed_over(cli_options.parse(["--only", exp]), experiments.BY_NAME[exp])
        assert not handover.handed_over(cli_options.parse(["--only", exp, "--grid", "gpu"]), experiments.BY_NAME[exp])


def test_only_filter_and_shard_combine_in_that_order():
    selected = [r["line"] for r in dry_run("--grid", "study", "--only", "exp3", "--filter", "__medium__")]
    assert len(selected) == 8
    sharded = [r["line"] for r in dry_run("--grid", "study", "--only", "exp3", "--filter", "__medium__", "--shard", "2/3")]
    assert sharded == selected[1::3]


def test_dry_run_estimates_the_duration_weighting_eager_runs_above_compiled_ones():
    def estimate(regex):
        result = benchmark("--dry-run", "--grid", "study", "--filter", regex)
        match = re.search(r"^(\d+) runs; estimated time on a 2-core CPU: about (\d+) (s|min)", result.stderr, re.M)
        assert match, result.stderr
        return int(match[1]), int(match[2]) * (60 if match[3] == "min" else 1)

    eager_runs, eager = estimate(r"^exp2__ppo_linen__none__(CartPole|Acrobot)")
    compiled_runs, compiled = estimate(r"^exp2__ppo_linen__jit__(CartPole|Acrobot)")
    assert eager_runs == compiled_runs == 2
    assert eager > 5 * compiled > 0


@pytest.mark.parametrize(
    "args",
    [
        ["--bogus"],
        ["--repeats", "0"],
        ["--repeats", "two"],
        ["--iterations", "-1"],
        ["--eager-iterations", "0"],
        ["--timeout", "1.5"],
        ["--shard", "3/2"],
        ["--shard", "0/2"],
        ["--shard", "1"],
        ["--only", "exp4", "--grid", "study"],
        ["--only", "exp5", "--grid", "study"],
        ["--only", "exp6", "--grid", "study"],
        ["--only", "exp7", "--grid", "study"],
        ["--exp5-iterations", "0"],
        ["--exp7-large-iterations", "two"],
        ["--grid", "study", "--filter", "__medium__|^warmup", "--shard", "60/60"],
        ["--grid", "all"],
        ["--filter", "("],
        ["--filter", "no run matches this"],
        ["--out"],
        ["--out="],
        ["extra"],
    ],
)
def test_bad_options_fail_with_one_line_on_stderr_and_exit_2(args):
    result = planned("--dry-run", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("benchmark.sh: ")


def test_help_documents_every_option_both_grids_the_method_and_estimates():
    result = benchmark("--help")
    assert result.returncode == 0
    for option in ["--dry-run", "--out", "--grid", "--repeats", "--filter", "--only", "--iterations",
                   "--eager-iterations", "--exp5-iterations", "--exp7-large-iterations", "--quick", "--shard",
                   "--timeout"]:
        assert option in result.stdout
    for text in ["study", "231 runs", "ppo_nnx_tree.py", "ppo_equinox.py", "exp4", "exp5", "__n<N>__sync__<seed>",
                 "exp6", "ppo_linen_scan.py --num-seeds N", "__a<N>__<seed>", "group.json", "1+1000r", "exp7",
                 "exp7__<script>__<mode>__<env_id>__<size>__sync__<seed>",
                 "BENCHMARK_MEM_AVAILABLE_KB", "docs/method.md", "ESTIMATES", "GPU"]:
        assert text in result.stdout
    assert "SPEC" not in result.stdout
    assert (REPO / "docs" / "method.md").exists()


def test_quick_touches_every_pair_two_sizes_both_timing_modes_and_every_env_family():
    runs = dry_run("--quick", "--grid", "study")
    assert len(runs) == 31
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
    # enough iterations to fill plot.py's windows 0, 1-7 and 8-99, far fewer than 100, eager runs too
    assert {r["iterations"] for r in runs} == {10}
    assert {tuple(r["workload"].items()) for r in runs} == {tuple(QUICK_WORKLOAD.items())}


def test_quick_default_grid_touches_every_new_variant_and_exp4():
    runs = dry_run("--quick")
    assert {(r["script"], r["mode"]) for r in runs} == set(PAIRS + NEW_PAIRS + BACKEND_VARIANTS + QUICK_EXP5_VARIANTS
                                                          + [SCAN_COMPILED] + EXP8_VARIANTS
                                                          + [(variant.script, variant.mode)
                                                             for variant in experiments.EXP9.QUICK_PPO_VARIANTS])
    assert {(r["script"], r["mode"]) for r in runs if r["exp"] == "exp1"} == set(COMPILED + NEW_COMPILED + [SCAN_COMPILED])
    assert {(r["script"], r["mode"]) for r in runs if r["exp"] == "exp4"} == set(BACKEND_VARIANTS)
    assert {r["iterations"] for r in runs if r["exp"] != "exp5"} == {10}


def test_the_planner_and_its_machine_record_import_no_framework():
    code = (
        "import sys\n"
        "from sweep import __main__, machine, records\n"
        "info = machine.system_info('cmd')\n"
        "assert info['packages']['torch'] and info['command'] == 'cmd', info\n"
        "assert info['cpu'] and info['cpu_count'] and info['cpus_usable'] and 'gpu' in info, info\n"
        "assert 'git_commit' in info and 'git_dirty' in info, info\n"
        "assert not {'torch', 'jax', 'flax'} & set(sys.modules), 'a framework was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_observation_sizes_of_the_planners_data_are_those_of_the_gymnax_envs():
    import math

    import gymnax

    assert list(experiments.OBS_SIZES) == list(experiments.GRID_ENVS)
    for env_id, size in experiments.OBS_SIZES.items():
        env, env_params = gymnax.make(env_id)
        assert math.prod(env.observation_space(env_params).shape) == size, env_id


# PREREQUISITES, LOCK, WORKLOAD: checked before anything runs
def test_another_shell_than_bash_stops_with_one_line():
    if not shutil.which("dash"):
        pytest.skip("no dash to run benchmark.sh with")
    result = benchmark("--dry-run", shell="dash")
    assert_one_line_error(result, "needs bash >= 4.4")
    assert result.stdout == ""


def test_a_missing_gnu_timeout_stops_with_one_line_before_any_run(tmp_path):
    repo = fake_repo(tmp_path, {"ppo_linen.py": "import sys\n"})
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "timeout").write_text("#!/bin/sh\necho 'timeout (BusyBox) v1'\n")
    (fake_bin / "timeout").chmod(0o755)
    out = tmp_path / "sweep"
    result = benchmark("--quick", "--filter", "^warmup__", "--out", str(out), repo=repo,
                       env={"PATH": f"{fake_bin}:{os.environ['PATH']}"})
    assert_one_line_error(result, "needs GNU timeout")
    assert not out.exists()


def test_python_unable_to_import_a_scripts_package_stops_with_one_line_before_any_run(tmp_path):
    repo = fake_repo(tmp_path, {"ppo_linen.py": "import os\nimport package_that_is_not_installed\n"})
    out = tmp_path / "sweep"
    result = benchmark("--quick", "--filter", "^warmup__", "--out", str(out), repo=repo)
    assert_one_line_error(result, "cannot run the scripts: package_that_is_not_installed (ModuleNotFoundError")
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_a_selected_script_missing_or_unparsable_stops_with_one_line_before_any_run(tmp_path):
    repo = fake_repo(tmp_path, {"ppo_linen.py": "import sys\n", "ppo_nnx_cached.py": "def (:\n"})
    out = tmp_path / "sweep"
    result = benchmark("--filter", "^warmup__", "--out", str(out), repo=repo)
    assert_one_line_error(result, "ppo_nnx_cached.py (SyntaxError")
    assert "ppo_torch_compile.py (missing)" in result.stderr
    assert not out.exists()


def test_a_python_that_does_not_run_stops_with_one_line():
    result = benchmark("--dry-run", env={"PYTHON": "/nonexistent/python"})
    assert_one_line_error(result, "PYTHON='/nonexistent/python'")


def test_a_second_sweep_into_a_locked_out_stops_with_one_line(tmp_path):
    import fcntl

    repo = fake_repo(tmp_path, {"ppo_linen.py": "import sys\n"})
    out = tmp_path / "sweep"
    out.mkdir()
    with open(out / ".lock", "w") as lock:  # what a running sweep holds
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write("12345\n")
        lock.flush()
        result = benchmark("--quick", "--filter", "^warmup__", "--out", str(out), repo=repo)
    assert_one_line_error(result, "another sweep (pid 12345) is writing into")
    assert sorted(path.name for path in out.iterdir()) == [".lock"]


def test_a_folder_with_finished_runs_but_no_workload_is_refused(tmp_path):
    repo = fake_repo(tmp_path, {"ppo_linen.py": "import sys\n"})
    out = tmp_path / "sweep"
    out.mkdir()
    (out / "finished.txt").write_text("warmup__ppo_linen__jit__CartPole-v1__small__1\n")
    result = benchmark("--quick", "--filter", "^warmup__", "--out", str(out), repo=repo)
    assert_one_line_error(result, "workload is unknown")
    assert not (out / "workload.json").exists()


# REAL SWEEPS
def running(pid):
    """Whether process `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def process_state(tmp_path, pids):
    """For a failure message: the processes of this test and the signal masks of `pids`."""
    table = subprocess.run(["ps", "-eo", "pid,ppid,pgid,stat,wchan:24,args"], capture_output=True, text=True).stdout
    lines = [line for line in table.splitlines()[1:] if str(tmp_path) in line]
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as status:
                lines += [f"{pid} {line.strip()}" for line in status if line.startswith(("Sig", "Shd", "State"))]
        except FileNotFoundError:
            lines.append(f"{pid} gone")
    return "\n".join(lines)


def read_lines(path):
    return path.read_text().splitlines() if path.exists() else []


def records(out):
    """OUT/records.txt's records, in order: [run name, verdict, exit status, milliseconds, load, log] each."""
    return [line.split(" ") for line in read_lines(out / "records.txt")]


def finished_runs(out):
    """The runs that OUT's records say finished, in order."""
    return [name for name, verdict, *_ in records(out) if verdict == "finished"]


def failed_lines(out):
    """[run name, reason, log] of each failed attempt: the reason its exit status, or timeout, or incomplete."""
    return [[name, status if verdict == "failed" else verdict, log] for name, verdict, status, _, _, log in records(out)
            if verdict != "finished"]


TWO_LINEN_RUNS = r"^(warmup|exp2)__ppo_linen__jit__CartPole-v1__small__"
QUICK_ENVS = ["CartPole-v1", "DiscountingChain-bsuite", "Breakout-MinAtar", "Acrobot-v1", "doors:Doors-v0"]


@pytest.mark.slow
@pytest.mark.skipif(not (REPO / "ppo_linen.py").exists(), reason="ppo_linen.py is not written yet")
def test_tiny_real_sweep_records_finished_runs_and_the_machine_then_a_rerun_skips_them(tmp_path):
    out = tmp_path / "sweep"
    stale = out / "runs" / "exp2" / "exp2__ppo_linen__jit__CartPole-v1__small__1" / "stale-partial-file"
    stale.parent.mkdir(parents=True)
    stale.touch()
    args = ["--quick", "--filter", TWO_LINEN_RUNS, "--iterations", "2", "--out", str(out)]
    result = benchmark(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    names = ["warmup__ppo_linen__jit__CartPole-v1__small__1", "exp2__ppo_linen__jit__CartPole-v1__small__1"]
    assert finished_runs(out) == names and len(records(out)) == 2  # one record per run
    for name, _, status, ms, load, log in records(out):
        assert status == "0" and int(ms) > 0 and float(load) >= 0 and log == f"logs/{name.split('__')[0]}/{name}.log"
    [sweep_line] = read_lines(out / "sweeps.txt")  # start, end, seconds, runs attempted, command
    assert int(sweep_line.split()[2]) >= 0 and sweep_line.split()[3] == "2"
    assert shlex.split(sweep_line.split(maxsplit=4)[4])[1:] == args
    assert not stale.exists()  # an earlier attempt's leftovers are cleaned
    for name in names:
        exp = name.split("__")[0]
        assert len(list((out / "runs" / exp / name).glob("events.out.tfevents.*"))) == 1
        assert (out / "logs" / exp / f"{name}.log").exists()
    assert "[2/2] exp2 ppo_linen jit CartPole-v1 small seed 1, 2 iterations" in result.stdout
    assert json.loads((out / "workload.json").read_text()) == {
        "iterations": 2, "eager_iterations": 2, "num_envs": 32, "num_steps": 32, "update_epochs": 2, "num_minibatches": 4,
        "exp5_iterations": 12, "exp5_num_envs": [8, 32, 128], "exp7_large_iterations": 2, "exp12_iterations": 2,
        "dqn_total_timesteps": 20000, "dqn_iteration_steps": 2000, "dqn_learning_starts": 2000, "dqn_buffer_size": 10000,
        "dqn_minatar_total_timesteps": 200000, "dqn_minatar_iteration_steps": 10000,
        "dqn_minatar_learning_starts": 10000, "dqn_minatar_buffer_size": 100000}

    system = json.loads((out / "system.json").read_text())
    assert set(system["packages"]) == {"jax", "jaxlib", "flax", "optax", "gymnax", "equinox", "gymnasium", "torch",
                                       "tyro", "tensorboard", "numpy"}
    assert system["cpu"] and system["cpu_count"] and system["hostname"] and system["date"]
    assert shlex.split(system["command"])[1:] == args
    timing = json.loads((out / "env_timing.json").read_text())
    assert (timing["num_envs"], timing["num_steps"]) == (32, 256)
    assert list(timing["envs"]) == QUICK_ENVS  # every env of the grid, not only the selected runs'
    assert min(entry["relative"] for entry in timing["envs"].values()) == 1.0
    assert 0 < timing["envs"]["CartPole-v1"]["step_seconds"] < 0.1

    event_files = sorted(out.glob("runs/*/*/events.out.tfevents.*"))
    mtimes = [path.stat().st_mtime for path in event_files]
    rerun = benchmark(*args)
    assert rerun.returncode == 0
    assert "2 already finished, 0 to run" in rerun.stdout
    assert finished_runs(out) == names and len(records(out)) == 2
    assert len(read_lines(out / "sweeps.txt")) == 1  # a rerun with nothing to run records no invocation
    assert [path.stat().st_mtime for path in sorted(out.glob("runs/*/*/events.out.tfevents.*"))] == mtimes


# The end of a fake script that finishes: it writes time/total into its run folder.
FINISH = """
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter
option = lambda name: sys.argv[sys.argv.index(name) + 1]
writer = EventFileWriter(option("--log-dir") + "/" + option("--run-name"))
writer.add_event(Event(step=1, summary=Summary(value=[Summary.Value(tag="time/total", simple_value=1.0)])))
writer.close()
"""
# A fake ppo_linen.py that finishes after EAGER_SECONDS when eager, at once otherwise.
EAGER_SECONDS = 8  # long enough to tell apart from a compiled run (about a second) in whole seconds, no longer
TIMED_SCRIPT = f"import sys, time\nif '--no-jit' in sys.argv:\n    time.sleep({EAGER_SECONDS})\n{FINISH}"
# A fake script that prints its arguments (into the run's log) and finishes at once.
ECHO_SCRIPT = f"import sys\nprint(' '.join(sys.argv[1:]))\n{FINISH}"
# exp2 linen none, exp2 linen jit, exp3 linen none, exp3 linen jit
TIMED_RUNS = r"^exp[23]__ppo_linen__.*__small__"


@pytest.fixture(scope="module")
def timed_sweep(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("timed")
    repo = fake_repo(tmp_path, {"ppo_linen.py": TIMED_SCRIPT})
    out = tmp_path / "sweep"
    result = benchmark("--quick", "--filter", TIMED_RUNS, "--out", str(out), repo=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    return result, out, repo


def seconds_left(stdout, number):
    match = re.search(rf"^\[{number}/4\] .* · about (\d+) s left \.\.\. ok, (\d+) s$", stdout, re.M)
    assert match, stdout
    return int(match[1]), int(match[2])


@pytest.mark.slow
def test_the_sweep_prints_the_run_count_and_an_estimate_before_the_first_run(timed_sweep):
    result, _, _ = timed_sweep
    before = result.stdout.split("[1/4]")[0]
    assert "4 runs selected, 0 already finished, 4 to run" in before
    assert re.search(r"estimated time for the 4 runs: about \d+ (s|min) \(rough", before)
    assert machine_module.LEARNING_CHECK in before  # how to check, before a reference sitting, that every script learns


@pytest.mark.slow
def test_the_eta_weights_remaining_runs_by_the_cost_of_runs_of_the_same_script_mode_and_size(timed_sweep):
    result, _, _ = timed_sweep
    _, compiled = seconds_left(result.stdout, 2)
    third_left, eager = seconds_left(result.stdout, 3)
    last_left, _ = seconds_left(result.stdout, 4)
    assert eager >= EAGER_SECONDS
    # before run 3: one eager and one compiled run left; before run 4: one compiled run, priced as
    # the compiled run seen (one mean over all runs so far would say (2 eager + 1 compiled) / 3)
    assert eager + compiled - 1 <= third_left <= eager + compiled + 1
    assert last_left <= compiled + 1 < EAGER_SECONDS / 2


@pytest.mark.slow
def test_a_rerun_with_the_same_workload_resumes_and_a_different_one_is_refused(timed_sweep):
    _, out, repo = timed_sweep
    before = sorted(str(path) for path in out.rglob("*"))
    assert "4 already finished, 0 to run" in benchmark("--quick", "--filter", TIMED_RUNS, "--out", str(out), repo=repo).stdout
    for other in (["--filter", TIMED_RUNS], ["--quick", "--iterations", "12", "--filter", TIMED_RUNS],
                  ["--quick", "--eager-iterations", "5", "--filter", TIMED_RUNS]):
        result = benchmark(*other, "--out", str(out), repo=repo)
        assert_one_line_error(result, "holds runs of another workload")
        assert "0 to run" not in result.stdout
    assert sorted(str(path) for path in out.rglob("*")) == before
    assert len(finished_runs(out)) == len(records(out)) == 4


@pytest.mark.slow
def test_a_folder_of_the_earlier_records_resumes_from_its_finished_runs_and_estimates_from_their_durations(timed_sweep,
                                                                                                          tmp_path):
    _, out, repo = timed_sweep
    resumed = tmp_path / "resumed"
    shutil.copytree(out, resumed)
    (resumed / ".lock").unlink()
    # what an earlier version wrote instead of records.txt: finished.txt, durations.txt, load.txt (3 runs of the 4)
    earlier = records(out)[:3]
    (resumed / "records.txt").unlink()
    (resumed / "finished.txt").write_text("".join(f"{name}\n" for name, *_ in earlier))
    (resumed / "durations.txt").write_text("".join(f"{name} {ms}\n" for name, _, _, ms, _, _ in earlier))
    (resumed / "load.txt").write_text("".join(f"{name} {load}\n" for name, _, _, _, load, _ in earlier))
    result = benchmark("--quick", "--filter", TIMED_RUNS, "--out", str(resumed), repo=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 runs selected, 3 already finished, 1 to run" in result.stdout
    assert "from the runs already timed in" in result.stdout
    assert [name for name, *_ in records(resumed)] == finished_runs(resumed) == [records(out)[3][0]]
    assert read_lines(resumed / "finished.txt") == [name for name, *_ in earlier]  # read, never written
    assert "4 runs selected, 4 already finished, 0 to run" in benchmark(
        "--quick", "--filter", TIMED_RUNS, "--out", str(resumed), repo=repo).stdout


# EXP5 SWEEPS: a run's number of envs is part of its identity
EXP5_LINEN = "exp5__ppo_linen__jit__CartPole-v1__small__n{}__1"


@pytest.fixture(scope="module")
def exp5_sweep(tmp_path_factory):
    """A --quick sweep of exp5's linen run at 8 envs, with fake ppo_linen.py and ppo_torch.py."""
    tmp_path = tmp_path_factory.mktemp("exp5")
    repo = fake_repo(tmp_path, {"ppo_linen.py": ECHO_SCRIPT, "ppo_torch.py": ECHO_SCRIPT})
    out = tmp_path / "sweep"
    result = benchmark("--quick", "--only", "exp5", "--filter", f"^{EXP5_LINEN.format(8)}$", "--out", str(out), repo=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert finished_runs(out) == [EXP5_LINEN.format(8)]
    return repo, out


def copy_sweep(out, tmp_path):
    copy = tmp_path / "sweep"
    shutil.copytree(out, copy)
    (copy / ".lock").unlink()
    return copy


@pytest.mark.slow
def test_an_exp5_resume_skips_the_finished_run_and_runs_the_other_numbers_of_envs_and_timing(exp5_sweep, tmp_path):
    repo, out = exp5_sweep
    out = copy_sweep(out, tmp_path)
    first_log = out / "logs" / "exp5" / f"{EXP5_LINEN.format(8)}.log"
    before = first_log.read_text()
    result = benchmark("--quick", "--only", "exp5", "--filter", f"^{EXP5_LINEN.format(8)[:-3]}|^{EXP5_LINEN.format(32)}",
                       "--out", str(out), repo=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 runs selected, 1 already finished, 2 to run" in result.stdout
    assert "from the runs already timed in" in result.stdout  # the exp5 name in records.txt was read
    assert "[1/2] exp5 ppo_linen jit CartPole-v1 small 32 envs seed 1, 12 iterations" in result.stdout
    assert "[2/2] exp5 ppo_linen jit CartPole-v1 small 8 envs sync seed 1, 12 iterations" in result.stdout
    sync_name = EXP5_LINEN.format(8).replace("__1", "__sync__1")
    assert finished_runs(out) == [EXP5_LINEN.format(8), EXP5_LINEN.format(32), sync_name]
    arguments = {name: (out / "logs" / "exp5" / f"{name}.log").read_text().split() for name in finished_runs(out)}
    assert arguments[EXP5_LINEN.format(32)][arguments[EXP5_LINEN.format(32)].index("--num-envs") + 1] == "32"
    assert "--sync-timing" in arguments[sync_name] and "--sync-timing" not in arguments[EXP5_LINEN.format(32)]
    assert first_log.read_text() == before  # not run again


@pytest.mark.slow
def test_the_records_that_an_interrupted_invocation_left_unjudged_are_judged_at_the_next_start(exp5_sweep, tmp_path):
    repo, out = exp5_sweep
    out = copy_sweep(out, tmp_path)
    # appended by an invocation stopped before its end: exit status 0, no verdict yet ("-"); the second run's folder
    # holds no time/total
    [line] = read_lines(out / "records.txt")
    other = EXP5_LINEN.format(32)
    (out / "records.txt").write_text(f"{line.replace(' finished ', ' - ')}\n{other} - 0 1200 0.5 logs/exp5/{other}.log\n")
    result = benchmark("--quick", "--only", "exp5", "--filter", f"^({EXP5_LINEN.format(8)}|{other})$", "--out",
                       str(out), repo=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 runs selected, 1 already finished, 1 to run" in result.stdout
    assert records(out)[0] == line.split(" ") and [fields[:3] for fields in records(out)[1:]] == [
        [other, "incomplete", "0"], [other, "finished", "0"]]


@pytest.mark.slow
def test_an_exp5_run_above_the_available_memory_is_refused_listed_in_the_summary_and_the_rest_runs(exp5_sweep, tmp_path):
    repo, out = exp5_sweep
    out = copy_sweep(out, tmp_path)
    runs = "^exp5__ppo_(linen__jit|torch__env-jit)__CartPole-v1__small__n32__1$"
    torch = "exp5__ppo_torch__env-jit__CartPole-v1__small__n32__1"
    peaks = refusals(benchmark("--dry-run", "--quick", "--filter", runs, repo=repo,
                               env={"BENCHMARK_MEM_AVAILABLE_KB": "1"}).stderr)
    linen_peak, torch_peak = peaks[EXP5_LINEN.format(32)][0], peaks[torch][0]
    assert linen_peak < torch_peak  # torch and JAX loaded take more than JAX alone
    result = benchmark("--quick", "--filter", runs, "--out", str(out), repo=repo,
                       env={"BENCHMARK_MEM_AVAILABLE_KB": str((linen_peak + 1) * 1024)})
    assert result.returncode == 1, result.stdout + result.stderr
    assert list(refusals(result.stderr)) == [torch]
    assert "1 runs selected, 0 already finished, 1 to run; 1 refused (memory, listed at the end)" in result.stdout
    assert "1 runs finished, 0 failed, 1 refused" in result.stdout
    listed = result.stdout.split("refused runs, not run")[1].splitlines()[1:]
    assert [line.split(": ")[0].strip() for line in listed] == [torch]
    assert finished_runs(out) == [EXP5_LINEN.format(8), EXP5_LINEN.format(32)]
    assert not (out / "logs" / "exp5" / f"{torch}.log").exists()


def workload_json(**fields):
    """The workload.json of --quick, with exp5's and exp7's fields as given (none: the format from before exp5)."""
    quick = {"iterations": 10, "eager_iterations": 10, "num_envs": 32, "num_steps": 32, "update_epochs": 2,
             "num_minibatches": 4}
    return json.dumps({**quick, **fields})


# exp8's: --quick's own DQN workload (with the scripts' default replay memory), and the MinAtar one (no --quick run)
BEFORE_MINATAR_DQN_FIELDS = {"dqn_total_timesteps": 20000, "dqn_iteration_steps": 2000, "dqn_learning_starts": 2000}
QUICK_DQN_FIELDS = {**BEFORE_MINATAR_DQN_FIELDS, "dqn_buffer_size": 10000, "dqn_minatar_total_timesteps": 200000,
                    "dqn_minatar_iteration_steps": 10000, "dqn_minatar_learning_starts": 10000,
                    "dqn_minatar_buffer_size": 100000}


QUICK_EXP5_FIELDS = {"exp5_iterations": 12, "exp5_num_envs": [8, 32, 128]}


@pytest.mark.parametrize("exp5, accepted", [
    ({**QUICK_EXP5_FIELDS, "exp7_large_iterations": 10, "exp12_iterations": 10, **QUICK_DQN_FIELDS}, True),
    ({}, True),  # written before exp5 existed, so without exp5 runs: it gains exp5's, exp7's and exp8's fields
    (QUICK_EXP5_FIELDS, True),  # written before exp7 existed: it gains exp7's field
    ({"exp5_iterations": 13, "exp5_num_envs": [8, 32, 128], "exp7_large_iterations": 10}, False),
    ({"exp5_iterations": 12, "exp5_num_envs": [8, 32], "exp7_large_iterations": 10}, False),
    ({**QUICK_EXP5_FIELDS, "exp7_large_iterations": 12}, False),
    ({**QUICK_EXP5_FIELDS, "exp7_large_iterations": 10}, True),  # written before exp8 existed: it gains exp8's fields
    ({**QUICK_EXP5_FIELDS, "exp7_large_iterations": 10, **QUICK_DQN_FIELDS, "dqn_total_timesteps": 40000}, False),
    # written before exp8's replay memory and MinAtar runs: its exp8 runs had the default memory, it gains the fields
    ({**QUICK_EXP5_FIELDS, "exp7_large_iterations": 10, **BEFORE_MINATAR_DQN_FIELDS}, True),
    ({**QUICK_EXP5_FIELDS, "exp7_large_iterations": 10, **QUICK_DQN_FIELDS, "dqn_buffer_size": 20000}, False),
    ({**QUICK_EXP5_FIELDS, "exp7_large_iterations": 10, **QUICK_DQN_FIELDS, "dqn_minatar_total_timesteps": 100000},
     False),
], ids=["same", "before-exp5", "before-exp7", "other-iterations", "other-numbers-of-envs", "other-exp7-iterations",
        "before-exp8", "other-dqn-timesteps", "before-minatar", "other-dqn-buffer", "other-minatar-timesteps"])
def test_a_folder_of_another_exp5_exp7_or_exp8_workload_is_refused(tmp_path, exp5, accepted):
    repo = fake_repo(tmp_path, {"ppo_linen.py": "import sys\n"})
    out = tmp_path / "sweep"
    out.mkdir()
    (out / "finished.txt").write_text(EXP5_LINEN.format(8) + "\n")
    (out / "workload.json").write_text(workload_json(**exp5) + "\n")
    result = benchmark("--quick", "--only", "exp5", "--filter", f"^{EXP5_LINEN.format(8)}$", "--out", str(out), repo=repo)
    if accepted:
        assert result.returncode == 0, result.stderr
        assert "1 runs selected, 1 already finished, 0 to run" in result.stdout
        assert (out / "workload.json").read_text() == workload_json(**QUICK_EXP5_FIELDS, exp7_large_iterations=10,
                                                                    exp12_iterations=10, **QUICK_DQN_FIELDS) + "\n"
    else:
        assert_one_line_error(result, "holds runs of another workload")


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
    repo = fake_repo(tmp_path, {"ppo_linen.py": FAULTY_SCRIPT})
    out = tmp_path / "sweep"
    start = time.monotonic()
    result = benchmark("--quick", "--filter", "^(warmup|exp1|exp2)__ppo_linen__jit__CartPole-v1__small__1$", "--timeout", "3",
                       "--out", str(out), repo=repo)
    return result, out, time.monotonic() - start


@pytest.mark.slow
def test_a_failing_run_is_recorded_with_its_exit_status_and_its_log_kept(faulty_sweep):
    _, out, _ = faulty_sweep
    name, status, log = failed_lines(out)[0]
    assert (name, status) == FAULTY_RUNS[0]
    assert log == f"logs/warmup/{name}.log"
    assert "fake failure" in (out / log).read_text()


@pytest.mark.slow
def test_the_sweep_goes_on_after_failures_and_exits_1_listing_them(faulty_sweep):
    result, out, _ = faulty_sweep
    assert [(name, status) for name, status, _ in failed_lines(out)] == FAULTY_RUNS
    assert finished_runs(out) == []
    assert result.returncode == 1
    assert "0 runs finished, 3 failed" in result.stdout
    listed = result.stdout.split("failed runs (also in ")[1].splitlines()[1:]
    assert listed == [f"  {name} {reason} {out}/{log}" for name, reason, log in failed_lines(out)]
    # as each ended: its exit status (whether exit status 0 finished, the summary says)
    assert re.search(r"\] exp2 .* FAILED \(exit status 124\) after \d+ s, log: ", result.stdout), result.stdout


@pytest.mark.slow
def test_a_run_exiting_0_without_time_total_is_recorded_incomplete_not_finished(faulty_sweep):
    _, out, _ = faulty_sweep
    name, status, log = failed_lines(out)[1]
    assert (name, status) == FAULTY_RUNS[1]
    assert "no time/total scalar" in (out / log).read_text()


@pytest.mark.slow
def test_a_run_exceeding_the_timeout_is_stopped_and_recorded_as_timeout(faulty_sweep):
    _, out, seconds = faulty_sweep
    assert tuple(failed_lines(out)[2][:2]) == FAULTY_RUNS[2]
    assert seconds < 100  # the 120 s sleep was cut short


@pytest.mark.slow
def test_ctrl_c_stops_the_running_child_records_no_run_and_keeps_the_invocation(tmp_path):
    repo = fake_repo(tmp_path, {"ppo_linen.py": "import os, sys, time\nprint(os.getpid(), flush=True)\ntime.sleep(120)\n"})
    out = tmp_path / "sweep"
    log = out / "logs" / "warmup" / "warmup__ppo_linen__jit__CartPole-v1__small__1.log"
    sweep = subprocess.Popen(
        ["bash", str(repo / "benchmark.sh"), "--quick", "--filter", "warmup", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHON": sys.executable},
        preexec_fn=default_sigint,
    )
    deadline = time.monotonic() + 120
    while not log.exists() or not log.read_text().strip():
        assert time.monotonic() < deadline and sweep.poll() is None, "the fake run never started"
        time.sleep(0.2)
    child = int(log.read_text())
    # while it runs, a second sweep into the same folder is refused
    second = benchmark("--quick", "--filter", "warmup", "--out", str(out), repo=repo)
    assert_one_line_error(second, f"another sweep (pid {sweep.pid}) is writing into")
    sweep.send_signal(signal.SIGINT)
    try:
        _, stderr = sweep.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        state = process_state(tmp_path, [sweep.pid, child])
        sweep.kill()
        pytest.fail(f"the sweep did not stop within 60 s of SIGINT:\n{state}")
    assert sweep.returncode == 130
    assert "interrupted during warmup__ppo_linen__jit__CartPole-v1__small__1" in stderr
    assert not running(child)
    assert records(out) == []  # the interrupted run is not recorded
    # every invocation of a sitting is in sweeps.txt, an interrupted one too: start, end, seconds, runs, command
    [sweep_line] = read_lines(out / "sweeps.txt")
    assert sweep_line.split()[3] == "1" and sweep_line.split(maxsplit=4)[4].endswith(f"--filter warmup --out {out}")


# EXP6 SWEEPS: a group of N agents, its processes two at a time (on two cores), resumed whole
# A fake ppo_linen_scan.py: one run folder per agent, as the script names them, each with time/total.
FAKE_SCAN = """
import sys
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter
option = lambda name: sys.argv[sys.argv.index(name) + 1]
agents, seed = int(option("--num-seeds")), int(option("--seed"))
for agent in range(seed, seed + agents):
    writer = EventFileWriter(option("--log-dir") + "/" + option("--run-name") + (f"__seed{agent}" if agents > 1 else ""))
    writer.add_event(Event(step=1, summary=Summary(value=[Summary.Value(tag="time/total", simple_value=1.0)])))
    writer.close()
"""
# A fake process of a group: appends "<group> start|end <seed> <time>" to $EXP6_TIMES as it starts and as it has
# written its time/total, a second apart.
TIMED_AGENT = f"""import os, sys, time
def record(event):
    group, seed = os.path.basename(sys.argv[sys.argv.index("--log-dir") + 1]), sys.argv[sys.argv.index("--seed") + 1]
    with open(os.environ["EXP6_TIMES"], "a") as times:
        times.write(f"{{group}} {{event}} {{seed}} {{time.time()}}\\n")
        times.write(f"{{group}} threads {{seed}} {{os.environ.get('OMP_NUM_THREADS', 0)}}\\n")
record("start")
time.sleep(1)
{FINISH}
record("end")
"""
INHERITED_THREADS = float(os.environ.get("OMP_NUM_THREADS", 0))  # what TIMED_AGENT records of a process left alone
TWO_CORES = sorted(os.sched_getaffinity(0))[:2]
needs_two_cores = pytest.mark.skipif(len(TWO_CORES) < 2, reason="two processes at a time need two cores")
EXP6_QUICK = ["--quick", "--only", "exp6", "--filter"]


def default_sigint():
    """Give the sweep SIGINT's default disposition: started from a suite that a shell ran in the background, it would
    inherit an ignored SIGINT, which bash can neither trap nor reset, and Ctrl-C could not be tested."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def on_two_cores():
    """preexec_fn of a sweep that may use two cores (whatever this machine has): its groups run 2 processes at a time."""
    os.sched_setaffinity(0, TWO_CORES)


def exp6_repo(tmp_path, agent_script):
    """A sweep with the fake scan script and `agent_script` as ppo_linen.py and ppo_torch.py, whose --quick exp6
    trains groups of 1 and 4 agents (not 1 and 2), so that a group of processes waits for free cores."""
    scripts = {"ppo_linen_scan.py": FAKE_SCAN, "ppo_linen.py": agent_script, "ppo_torch.py": agent_script}
    return fake_repo(tmp_path, scripts, [("\n    QUICK_AGENTS = (1, 2)\n", "\n    QUICK_AGENTS = (1, 4)\n")])


def agent_times(path):
    """{group: {"start"|"end": {seed: time}, "threads": {seed: OMP_NUM_THREADS}}} of the records of TIMED_AGENT."""
    times = {}
    for line in read_lines(path):
        group, event, seed, when = line.split()
        times.setdefault(group, {"start": {}, "end": {}, "threads": {}})[event][int(seed)] = float(when)
    return times


EXP6_GROUPS = [exp6_name(script, mode, "CartPole-v1", n) for n in (1, 4) for script, mode in [EXP6_SCAN, *EXP6_PROCESS_VARIANTS]]


@pytest.fixture(scope="module")
def exp6_sweep(tmp_path_factory):
    """The quick exp6 (groups of 1 and 4 agents) with fake scripts, on two cores; PYTHON logs the planner's commands
    into tmp_path/planner-calls."""
    tmp_path = tmp_path_factory.mktemp("exp6")
    repo = exp6_repo(tmp_path, TIMED_AGENT)
    out, times = tmp_path / "sweep", tmp_path / "times"
    python, _ = logging_python(tmp_path)
    result = benchmark(*EXP6_QUICK, "^exp6__", "--out", str(out), repo=repo,
                       env={"EXP6_TIMES": str(times), "PYTHON": python}, preexec_fn=on_two_cores)
    assert result.returncode == 0, result.stdout + result.stderr
    return result, repo, out, times


@pytest.mark.slow
def test_a_sweep_runs_the_planner_once_before_its_loop_and_once_after_and_appends_a_record_per_run(exp6_sweep):
    result, _, out, times = exp6_sweep
    # the groups of processes run by the planner's group runner, their command; no planner process between runs
    assert read_lines(times.parent / "planner-calls") == ["plan", "start", "record", *["group"] * 4, "done"]
    assert [name for name, *_ in records(out)] == EXP6_GROUPS == finished_runs(out)
    for name, _, status, ms, load, log in records(out):
        assert status == "0" and int(ms) > 0 and (load == "-" or float(load) >= 0), name
        assert log == f"logs/exp6/{name}.log" and (out / log).is_file()
    assert "6 runs finished, 0 failed" in result.stdout


@pytest.mark.slow
@needs_two_cores
def test_an_exp6_group_of_processes_runs_two_at_a_time_on_two_cores_with_a_thread_each_and_records_its_wall_time(
        exp6_sweep):
    result, _, out, times = exp6_sweep
    assert finished_runs(out) == EXP6_GROUPS
    for script, mode in EXP6_PROCESS_VARIANTS:
        group = exp6_name(script, mode, "CartPole-v1", 4)
        starts, ends, threads = agent_times(times)[group].values()
        # the two cores shared among the two processes at a time; a process alone keeps the environment of every run
        assert threads == {1: 1, 2: 1, 3: 1, 4: 1}
        assert agent_times(times)[exp6_name(script, mode, "CartPole-v1", 1)]["threads"] == {1: INHERITED_THREADS}
        assert sorted(starts) == sorted(ends) == [1, 2, 3, 4]
        running = [sum(starts[other] <= starts[seed] < ends[other] for other in starts) for seed in starts]
        assert max(running) == 2  # two at once, never three
        for seed in (3, 4):  # each waits for a process to end, and starts soon after
            ended = [end for end in ends.values() if end <= starts[seed]]
            assert ended and starts[seed] - max(ended) < 3
        record = json.loads((out / "runs" / "exp6" / group / "group.json").read_text())
        span = max(ends.values()) - min(starts.values())
        assert span <= record.pop("wall_seconds") <= span + 5
        assert record == {"script": script, "mode": mode, "env_id": "CartPole-v1", "agents": 4, "processes": 4,
                          "parallel": 2, "threads": 1, "cores": os.cpu_count()}
        assert sorted(path.name for path in (out / "logs" / "exp6" / group).iterdir()) == \
            [f"agent__seed{seed}.log" for seed in (1, 2, 3, 4)]
        assert f"exp6 {script} {mode} CartPole-v1 small 4 agents (4 processes, 2 at a time) seed 1..4, 10 iterations" \
            in result.stdout


@pytest.mark.slow
@needs_two_cores
def test_an_exp6_scan_group_is_one_process_with_a_run_folder_per_agent(exp6_sweep):
    result, _, out, times = exp6_sweep
    assert not any(group.startswith("exp6__ppo_linen_scan") for group in agent_times(times))
    for n in (1, 4):
        group = exp6_name(*EXP6_SCAN, "CartPole-v1", n)
        folder = out / "runs" / "exp6" / group
        assert sorted(path.name for path in folder.iterdir()) == sorted(["group.json"] + [f"agent__seed{s}" for s in range(1, n + 1)])
        assert all(len(list((folder / f"agent__seed{s}").glob("events.out.tfevents.*"))) == 1 for s in range(1, n + 1))
        record = json.loads((folder / "group.json").read_text())
        assert (record["agents"], record["processes"], record["parallel"]) == (n, 1, 1)
        assert record["wall_seconds"] > 0
        assert (out / "logs" / "exp6" / f"{group}.log").exists()
    assert "exp6 ppo_linen_scan scan CartPole-v1 small 4 agents (1 process) seed 1..4, 10 iterations" in result.stdout
    assert "exp6 ppo_linen jit CartPole-v1 small 1 agent (1 process) seed 1, 10 iterations" in result.stdout


@pytest.mark.slow
@needs_two_cores
def test_an_exp6_resume_skips_the_finished_groups_and_reruns_an_unfinished_one_whole(exp6_sweep, tmp_path):
    _, repo, out, times = exp6_sweep
    out = copy_sweep(out, tmp_path)
    times = Path(shutil.copy(times, tmp_path / "times"))
    group = exp6_name("ppo_linen", "jit", "CartPole-v1", 4)
    folder = out / "runs" / "exp6" / group
    # what an interrupted attempt leaves: no group.json, some agents finished, one not, no record
    (folder / "group.json").unlink()
    shutil.rmtree(folder / "agent__seed3")
    (folder / "agent__seed3").mkdir()
    (out / "records.txt").write_text("".join(f"{line}\n" for line in read_lines(out / "records.txt")
                                             if not line.startswith(f"{group} ")))
    others = {path: path.stat().st_mtime for path in out.glob("runs/exp6/*/*/events.out.tfevents.*") if group not in str(path)}
    result = benchmark(*EXP6_QUICK, "^exp6__", "--out", str(out), repo=repo, env={"EXP6_TIMES": str(times)},
                       preexec_fn=on_two_cores)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 runs selected, 5 already finished, 1 to run" in result.stdout
    assert "from the runs already timed in" in result.stdout  # the groups' durations were read back
    starts = Counter(line.split()[0] for line in read_lines(times) if line.split()[1] == "start")
    assert starts == {exp6_name("ppo_linen", "jit", "CartPole-v1", 1): 1, exp6_name("ppo_torch", "env-jit", "CartPole-v1", 1): 1,
                      group: 8, exp6_name("ppo_torch", "env-jit", "CartPole-v1", 4): 4}  # only it ran again, all of it
    assert json.loads((folder / "group.json").read_text())["agents"] == 4
    assert all(len(list((folder / f"agent__seed{seed}").glob("events.out.tfevents.*"))) == 1 for seed in (1, 2, 3, 4))
    assert {path: path.stat().st_mtime for path in others} == others


# A fake process of a group: in the group of 4, agent 2 fails at once and the others would sleep a minute; in the
# group of 1, the agent exits 0 without time/total.
FAILING_AGENT = f"""import os, sys, time
print(os.getpid(), flush=True)
log_dir, seed = sys.argv[sys.argv.index("--log-dir") + 1], sys.argv[sys.argv.index("--seed") + 1]
if "__a1__" in log_dir:
    sys.exit(0)
if seed == "2":
    sys.exit("fake failure")
time.sleep(60)
{FINISH}
"""


@pytest.mark.slow
@needs_two_cores
def test_a_failing_process_fails_its_group_stops_the_others_and_leaves_no_group_json(tmp_path):
    repo = exp6_repo(tmp_path, FAILING_AGENT)
    out = tmp_path / "sweep"
    start = time.monotonic()
    result = benchmark(*EXP6_QUICK, r"^exp6__ppo_linen__jit__CartPole-v1__small__a[14]__1$", "--out", str(out),
                       repo=repo, preexec_fn=on_two_cores)
    assert time.monotonic() - start < 50  # the group of 4 did not wait for its sleeping agents
    assert result.returncode == 1, result.stdout + result.stderr
    one, four = exp6_name("ppo_linen", "jit", "CartPole-v1", 1), exp6_name("ppo_linen", "jit", "CartPole-v1", 4)
    assert failed_lines(out) == [[one, "incomplete", f"logs/exp6/{one}/agent__seed1.log"],
                                 [four, "1", f"logs/exp6/{four}/agent__seed2.log"]]
    assert "no time/total scalar" in (out / "logs" / "exp6" / one / "agent__seed1.log").read_text()
    assert "fake failure" in (out / "logs" / "exp6" / four / "agent__seed2.log").read_text()
    assert finished_runs(out) == []
    assert not list(out.glob("runs/exp6/*/group.json"))
    logs = out / "logs" / "exp6" / four
    assert sorted(path.name for path in logs.iterdir()) == ["agent__seed1.log", "agent__seed2.log"]  # none started after
    started = read_lines(logs / "agent__seed1.log")  # its pid, unless it was stopped before it printed it (a busy CPU)
    assert not started or not running(int(started[0]))  # stopped
    assert "0 runs finished, 2 failed" in result.stdout


@pytest.mark.slow
@needs_two_cores
def test_ctrl_c_during_a_group_stops_every_process_of_it_and_records_nothing(tmp_path):
    repo = exp6_repo(tmp_path, "import os, sys, time\nprint(os.getpid(), flush=True)\ntime.sleep(120)\n")
    out = tmp_path / "sweep"
    group = exp6_name("ppo_linen", "jit", "CartPole-v1", 4)
    logs = [out / "logs" / "exp6" / group / f"agent__seed{seed}.log" for seed in (1, 2)]
    sweep = subprocess.Popen(
        ["bash", str(repo / "benchmark.sh"), *EXP6_QUICK, f"^{group}$", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: (on_two_cores(), default_sigint()),
        env={**os.environ, "PYTHON": sys.executable, "BENCHMARK_MEM_AVAILABLE_KB": str(2**30)},
    )
    deadline = time.monotonic() + 120
    while not all(log.exists() and log.read_text().strip() for log in logs):
        assert time.monotonic() < deadline and sweep.poll() is None, "the fake processes never started"
        time.sleep(0.2)
    children = [int(log.read_text()) for log in logs]
    sweep.send_signal(signal.SIGINT)
    try:
        _, stderr = sweep.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        state = process_state(tmp_path, [sweep.pid, *children])
        sweep.kill()
        pytest.fail(f"the sweep did not stop within 60 s of SIGINT:\n{state}")
    assert sweep.returncode == 130
    assert f"interrupted during {group} (not recorded)" in stderr
    assert not any(running(child) for child in children)
    assert process_state(tmp_path, []) == ""  # no process of this test left: no agent, no timeout
    assert records(out) == []
    assert not (out / "runs" / "exp6" / group / "group.json").exists()
    assert sorted(path.name for path in logs[0].parent.iterdir()) == ["agent__seed1.log", "agent__seed2.log"]


# --max-minutes: a sweep in chunks that each end before a time limit (a GPU machine lent for minutes at a time)
def test_the_planner_hands_the_loop_each_runs_estimate_and_the_limit_once(tmp_path):
    from sweep.__main__ import start

    selection = ["--only", "exp8", "--filter", "^exp8__dqn_(linen|torch)__.*__CartPole-v1__small__n1__1$"]
    folder = tmp_path / "plan"
    folder.mkdir()
    (tmp_path / "sweep").mkdir()  # as benchmark.sh makes it, before `start`
    for limit, max_minutes in ((["--max-minutes", "3"], "3"), ([], "0")):
        sweep = plan(*limit, *selection, "--out", str(tmp_path / "sweep"))
        sweep.save(str(folder))  # what `plan` hands the loop: OUT and --max-minutes (0: none), NUL-separated
        assert (folder / "sweep").read_text() == f"{tmp_path / 'sweep'}\0{max_minutes}\0"
    assert start(str(folder)) == 0
    todo = [line.split("\t") for line in read_lines(folder / "todo")]
    assert [name for name, *_ in todo] == [run.name for run in sweep.selected] and len(todo) == 2
    for number, (run, (name, ms, group, run_dir, log, words)) in enumerate(zip(sweep.selected, todo), 1):
        c = run.config
        assert int(ms) == sweep.estimator.total_ms([c]) and group == f"{c.script}/{c.mode}/small/1/1"
        assert (run_dir, log) == (f"runs/exp8/{name}", f"logs/exp8/{name}.log")
        assert words == describe(run, sweep.workload, 2)
        argv = (folder / f"{number}.argv").read_text().split("\0")
        assert argv[-1] == "" and argv[:-1] == sweep.run_command(run)  # NUL-terminated words, no quoting


def test_the_loop_evaluates_no_words_reads_no_json_and_calls_the_planner_only_before_and_after_it():
    lines = (REPO / "benchmark.sh").read_text().splitlines()
    code = [line.split(" # ")[0] for line in lines if not line.lstrip().startswith("#")]  # comments aside
    assert not [line for line in code if re.search(r"\beval\b|json", line)]
    calls = [call for line in code for call in re.findall(r"\bplanner (\w+)", line)]
    assert sorted(set(calls)) == ["done", "plan", "record", "start"]


def test_the_loops_durations_read_as_the_planners():
    """The loop writes its ETA and --max-minutes lines itself: its duration_text is the planner's, word for word."""
    function = re.search(r"^duration_text\(\) \{.*?^\}$", (REPO / "benchmark.sh").read_text(), re.S | re.M)[0]
    seconds = [0, 59, 60, 89, 90, 3599, 3600, 3661, 172799, 172800, 400000]
    script = function + "".join(f'\nduration_text {s}; echo "$REPLY"' for s in seconds)
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout.splitlines() == [estimate.duration_text(s) for s in seconds]


def test_the_report_reads_the_load_as_each_run_ended_from_the_records_after_the_earlier_versions_load_txt(tmp_path):
    from report.load import read_conditions

    (tmp_path / "load.txt").write_text("a 1.10\nb 0.90\n")
    (tmp_path / "records.txt").write_text("c finished 0 1000 2.50 logs/exp1/c.log\nd failed 1 20 - logs/exp1/d.log\n")
    assert read_conditions(tmp_path).loads == [1.10, 0.90, 2.50]  # "-": no load known
    (tmp_path / "load.txt").unlink()
    assert read_conditions(tmp_path).loads == [2.50]


def logging_python(tmp_path):
    """A PYTHON that appends the command of each `python -m sweep COMMAND ...` it runs to a file: (PYTHON, the file)."""
    calls, wrapper = tmp_path / "planner-calls", tmp_path / "logging-python"
    wrapper.write_text(f'#!/bin/sh\nif [ "$1 $2" = "-m sweep" ]; then echo "$3" >>{shlex.quote(str(calls))}; fi\n'
                       f'exec {shlex.quote(sys.executable)} "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper), calls


@pytest.mark.parametrize("args,expected", [
    (["--max-minutes", "0"], "--max-minutes needs a positive number of minutes, not '0'"),
    (["--max-minutes", "1.5"], "--max-minutes needs a positive number of minutes, not '1.5'"),
    (["--max-minutes", "5", "--slurm", "2", "--out", "/tmp/benchback-never-made"], "--max-minutes stops a sweep"),
])
def test_a_bad_max_minutes_is_one_line_and_nothing_runs(args, expected):
    assert_one_line_error(benchmark(*args, "--dry-run"), expected)


# the chunk test's built-in figures, appended to its fake repo's planner: an eager run 2 minutes, any other 10 ms; a
# fake run takes longer than 10 ms, and the estimator scales the figures of unseen runs by what the seen ones took
FAKE_PRIORS = "\n\ndef prior_ms(config, *args):\n    return 120000 if config.mode == 'none' else 10\n"


def test_max_minutes_stops_before_the_first_run_that_would_end_too_late_and_a_rerun_goes_on(tmp_path):
    repo = fake_repo(tmp_path, {"ppo_linen.py": ECHO_SCRIPT})
    with open(repo / "sweep" / "estimate.py", "a") as f:
        f.write(FAKE_PRIORS)
    out = tmp_path / "sweep"
    selection = ["--quick", "--filter", r"^exp(2__ppo_linen__jit|3__ppo_linen__none)__.*__small__", "--out", str(out)]
    python, calls = logging_python(tmp_path)
    first = benchmark(*selection, "--max-minutes", "1", repo=repo, env={"PYTHON": python})
    assert first.returncode == 0, first.stdout + first.stderr
    assert "[1/2] exp2" in first.stdout and "[2/2]" not in first.stdout
    assert re.search(r"^--max-minutes 1: \d+ s gone, run 2/2 \(exp3__ppo_linen__none__\S+\) would end after 1 min by "
                     r"its estimate \([^)]+\); it alone is estimated longer than 1 min: raise --max-minutes to run it; "
                     r"1 runs not started: rerun the same command to go on$", first.stdout, re.M), first.stdout
    assert "1 runs finished, 0 failed, 1 not started (--max-minutes 1)" in first.stdout
    assert len(finished_runs(out)) == 1
    assert read_lines(out / "sweeps.txt")[0].split()[3] == "1"  # the runs it started
    assert read_lines(calls) == ["plan", "start", "record", "done"]  # the planner before the loop and after it
    second = benchmark(*selection, repo=repo)  # no limit now
    assert second.returncode == 0, second.stdout + second.stderr
    assert "2 runs selected, 1 already finished, 1 to run" in second.stdout and "[1/1] exp3" in second.stdout
    assert "1 runs finished, 0 failed\n" in second.stdout and len(finished_runs(out)) == 2


# exp9: training on Doors, NumPy or JAX env
def test_exp9_trains_every_design_on_doors_with_seeds_1_to_3_and_the_wide_runs_keep_the_workload():
    runs = dry_run("--only", "exp9", "--filter", "^exp9__")
    assert {r["env"] for r in runs} == {"doors:Doors-v0"} and {r["seed"] for r in runs} == {1, 2, 3}
    single = {(r["script"], r["mode"]) for r in runs if r["num_envs"] in (1, 32)}
    assert single == {(variant.script, variant.mode)
                      for variant in experiments.EXP9.PPO_VARIANTS + experiments.EXP9.DQN_VARIANTS}
    wide = [r for r in runs if r["num_envs"] not in (1, 32)]
    assert {(r["script"], r["num_envs"]) for r in wide} == {("ppo_linen", 512), ("dqn_linen", 16)}
    for r in runs:  # PPO: the reference batch at any number of envs; DQN: exp8's transitions
        if r["script"].startswith("ppo_"):
            assert int(r["workload"]["--num-envs"]) * int(r["workload"]["--num-steps"]) == 32 * 256, r["line"]
            assert r["iterations"] == 100 and ("--vectorization vector" in r["line"]) == r["mode"].endswith("-vector")
        else:
            assert r["workload"]["--total-timesteps"] == "500000" and r["iterations"] == 50, r["line"]
        assert r["run_name"] == f"exp9__{r['script']}__{r['mode']}__doors:Doors-v0__small__n{r['num_envs']}__{r['seed']}"
    assert len(runs) == 51 and "  exp9     51 runs  " in benchmark("--help").stdout
