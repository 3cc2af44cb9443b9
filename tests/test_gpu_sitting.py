"""The GPU sitting, tested without a GPU: --grid gpu (its order, workload and size), tools/gpu_sitting.sh (a chunk on a
fake GPU machine, packing, unpacking, refusals), the record of the commit sent, and plot.py on a GPU sweep beside a
CPU one."""
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

from events import write_json, write_run
from sweep import experiments, machine
from sweep.plan import Plan
from test_benchmark import REPO, assert_one_line_error, benchmark, dry_run, fake_repo, finished_runs, ECHO_SCRIPT
from test_plot import run_plot

SITTING = REPO / "tools" / "gpu_sitting.sh"
GPU_CORES = 16  # the GPU machine's host: exp6's processes run side by side there


# THE GRID
@pytest.fixture(scope="module")
def gpu_runs():
    return dry_run("--grid", "gpu", "--out", "/tmp/benchback-never-made")


PRIORITIES = ["(a) graphs", "(b) seeds", "exp5", "exp6", "exp8", "exp14", "(g) the rest of exp7", "exp12"]


def priority(run: dict) -> str:
    """The part of the GPU grid's order a run belongs to (its exp, exp7's split in three)."""
    if run["exp"] != "exp7":
        return run["exp"]
    if run["seed"] != 1:
        return "(b) seeds"
    graphs = experiments.EXP7.GPU_GRAPH_VARIANTS
    block = (run["env"], run["size"]) in experiments.EXP7.GPU_GRAPH_BLOCKS
    return "(a) graphs" if block and (run["script"], run["mode"]) in {(v.script, v.mode) for v in graphs} \
        else "(g) the rest of exp7"


def test_the_gpu_grid_puts_torch_at_its_gpu_best_and_the_seeds_first_then_exp5_exp6_dqn_cnns_the_rest_brax_last(
        gpu_runs):
    assert gpu_runs[0]["exp"] == "warmup"
    parts = [priority(run) for run in gpu_runs[1:]]
    assert parts == sorted(parts, key=PRIORITIES.index) and set(parts) == set(PRIORITIES)
    graphs = [(run["script"], run["mode"], run["env"], run["size"]) for run in gpu_runs if priority(run) == "(a) graphs"]
    assert graphs == [(variant.script, variant.mode, env, size) for env, size in experiments.EXP7.GPU_GRAPH_BLOCKS
                      for variant in experiments.EXP7.GPU_GRAPH_VARIANTS]
    assert ("ppo_torch_native", "compile+cudagraphs", "Acrobot-v1", "small") in graphs
    seeds = {(run["script"], run["mode"], run["seed"]) for run in gpu_runs if priority(run) == "(b) seeds"}
    assert seeds == {(variant.script, variant.mode, seed) for variant in experiments.EXP7.GPU_SEED_VARIANTS
                     for seed in (2, 3)}
    assert all(run["env"] == "CartPole-v1" and run["size"] == "small" for run in gpu_runs if run["seed"] != 1)
    cudagraphs = [run for run in gpu_runs if run["mode"] == "compile+cudagraphs"]
    assert cudagraphs and all("--cudagraphs" in run["line"].split() for run in cudagraphs)
    native = [run for run in cudagraphs if run["script"] == "ppo_torch_native"]
    assert native and all({"--compile", "--cudagraphs"} <= set(run["line"].split()) for run in native)
    assert len({run["run_name"] for run in gpu_runs}) == len(gpu_runs)


def test_the_rest_of_exp7_is_every_gpu_variant_per_block_but_the_runs_before(gpu_runs):
    exp7 = [run for run in gpu_runs if run["exp"] == "exp7" and run["seed"] == 1]
    rest = [run for run in exp7 if priority(run) == "(g) the rest of exp7"]
    assert list(dict.fromkeys((run["env"], run["size"]) for run in rest)) == list(experiments.EXP7.GPU_SIZE_ORDER)
    for env, size in experiments.EXP7.GPU_SIZE_ORDER:  # every variant per block, with (a)'s; torch on envs in torch
        variants = {(run["script"], run["mode"]) for run in exp7 if (run["env"], run["size"]) == (env, size)}
        expected = {(variant.script, variant.mode) for variant in experiments.EXP7.GPU_VARIANTS}
        if env == "Breakout-MinAtar":
            expected = {(script, mode) for script, mode in expected if script != "ppo_torch_native"}
        assert variants == expected, (env, size)


def test_repeats_of_the_gpu_grid_run_a_pinned_seed_once():
    runs = dry_run("--grid", "gpu", "--repeats", "3", "--out", "/tmp/benchback-never-made")
    names = [run["run_name"] for run in runs if run["exp"] == "exp7"]
    assert len(names) == len(set(names)) and "exp7__ppo_linen__jit__CartPole-v1__small__2" in names


def test_the_gpu_grid_goes_to_65536_envs_populations_of_256_agents_and_the_dqn_scripts_on_gymnax(gpu_runs):
    exp5 = {(run["script"], run["mode"], int(run["line"].split("--num-envs ")[1].split()[0])) for run in gpu_runs
            if run["exp"] == "exp5"}
    assert exp5 == {(script, mode, n) for script, mode in (("ppo_linen", "jit"), ("ppo_torch_native",
                                                                                  "compile+cudagraphs"))
                    for n in experiments.EXP5.GPU_NUM_ENVS}
    assert max(experiments.EXP5.GPU_NUM_ENVS) == 65536
    exp6 = {(run["script"], run["agents"]) for run in gpu_runs if run["exp"] == "exp6"}
    assert {("ppo_linen_scan", 64), ("ppo_linen_scan", 256), ("ppo_linen", 8)} <= exp6
    exp8 = [(run["script"], run["mode"]) for run in gpu_runs if run["exp"] == "exp8"]
    assert exp8 == [(variant.script, variant.mode) for variant in experiments.EXP8.GPU_VARIANTS] and not any(s.endswith("_gymnasium") for s, _ in exp8)


def test_the_gpu_grids_cnns_are_minatars_in_every_gymnax_framework_at_two_sizes_and_the_atari_scripts(gpu_runs):
    """exp14's cases at the CPU sitting's workloads: --network cnn at small and medium (the wide CNN) on
    Breakout-MinAtar, the reference workload; the Nature CNN on Breakout-v5 at CleanRL's, no --network flag."""
    exp14 = [run for run in gpu_runs if run["exp"] == "exp14"]
    minatar = [run for run in exp14 if run["env"] == "Breakout-MinAtar"]
    assert [(run["script"], run["mode"], run["size"]) for run in minatar] == [
        (variant.script, variant.mode, size) for size in ("small", "medium")
        for variant in experiments.EXP14.MINATAR_VARIANTS]
    assert all("--network cnn" in run["line"] and run["workload"]["--num-envs"] == "32" and
               run["workload"]["--update-epochs"] == "10" for run in minatar)
    atari = [run for run in exp14 if run not in minatar]
    assert [(run["script"], run["env"], run["size"]) for run in atari] == [
        (variant.script, "Breakout-v5", "nature") for variant in experiments.EXP14.ATARI_VARIANTS]
    flags = ("--num-envs", "--num-steps", "--update-epochs", "--num-minibatches")
    assert all("--network" not in run["line"] and [run["workload"][flag] for flag in flags] == ["8", "128", "4", "4"]
               for run in atari)
    assert {run["iterations"] for run in exp14} == {16}


def test_the_gpu_grid_runs_16_iterations_12_at_large_and_in_exp5_and_its_own_dqn_workload(gpu_runs):
    iterations = {(run["exp"], run["size"]): run["iterations"] for run in gpu_runs if run["exp"] != "exp8"}
    assert iterations[("exp7", "small")] == iterations[("exp7", "medium")] == 16
    assert iterations[("exp7", "large")] == iterations[("exp5", "small")] == 12
    dqn = [run for run in gpu_runs if run["exp"] == "exp8"]
    assert all(run["workload"]["--total-timesteps"] == "30000" and run["workload"]["--iteration-steps"] == "3000"
               for run in dqn)


def test_the_gpu_grid_answers_its_first_questions_in_two_10_minute_windows_by_its_estimate():
    sweep = Plan(["--grid", "gpu"], "benchmark.sh", str(REPO), "python", GPU_CORES, GPU_CORES)
    exp7 = experiments.EXP7
    first = 1 + len(exp7.GPU_GRAPH_BLOCKS) * len(exp7.GPU_GRAPH_VARIANTS) + len(exp7.GPU_SEED_VARIANTS) * len(
        exp7.GPU_SEEDS)  # the warm-up, (a) and (b)
    minutes = {part: sweep.estimator.total_ms(run.config for run in sweep.selected if part(run)) / 60000 for part in (
        lambda run: True, lambda run: run.config.exp == "exp12", lambda run: run.index <= first)}
    total, brax, first = minutes.values()
    assert 45 <= total <= 60  # the whole grid: six windows
    assert brax <= 10  # exp12's Brax runs, last: a window that reaches them has answered everything before
    assert first <= 16  # (a) and (b), the question a short sitting answers: two 10-minute windows


WINDOW_MINUTES = 8  # of runs, in a window of `tools/gpu_sitting.sh run 9` (its preparation and packing left out)


def test_docs_windows_plan_gives_each_parts_runs_and_minutes_and_the_window_that_ends_it_by_the_estimate():
    """docs/running.md's plan of windows: per part of the GPU grid's order (the warm-up in (a)), its runs, its
    estimated minutes, the minutes up to its end and the window of WINDOW_MINUTES that ends it."""
    sweep = Plan(["--grid", "gpu"], "benchmark.sh", str(REPO), "python", GPU_CORES, GPU_CORES)
    parts = {}
    for run in sweep.selected:
        fields = {"exp": run.config.exp, "seed": run.seed, "env": run.config.env, "size": run.config.size,
                  "script": run.config.script, "mode": run.config.mode}
        part = "(a) graphs" if run.config.exp == "warmup" else priority(fields)
        parts.setdefault(f"({'abcdefgh'[PRIORITIES.index(part)]})", []).append(run.config)
    plan = (REPO / "docs" / "running.md").read_text().split("**The windows' plan**")[1].split("Where GPU time")[0]
    rows = re.findall(r"^\| (\([a-h]\)) \|[^|]+\| (\d+) \| ([\d.]+) \| ([\d.]+) \| (\d+) \|$", plan, re.M)
    end, expected = 0, []
    for part, configs in parts.items():
        minutes = sweep.estimator.total_ms(configs) / 60000
        end += minutes
        window = math.ceil(end / WINDOW_MINUTES)
        expected.append((part, str(len(configs)), f"{minutes:.1f}", f"{end:.1f}", str(window)))
    assert rows == expected


def test_the_gpu_grids_dry_run_names_what_its_estimate_is_for():
    result = benchmark("--grid", "gpu", "--dry-run", "--out", "/tmp/benchback-never-made")
    assert result.returncode == 0, result.stderr
    assert re.search(r"^120 runs; estimated time on one H100 GPU: about \d+ min", result.stderr, re.M), result.stderr


def test_a_bad_grid_is_one_line_naming_the_grids():
    assert_one_line_error(benchmark("--grid", "tpu", "--dry-run"),
                          "--grid needs study, default, gpu or reference, not 'tpu'")


# tools/gpu_sitting.sh
FAKE_GPU = "#!/bin/sh\ncase \"$*\" in *driver_version*) echo 'NVIDIA Test GPU, 580.00';; *) echo 'NVIDIA Test GPU';; esac\n"
NO_GPU = "#!/bin/sh\nexit 9\n"
# the chunk's built-in figures: ppo_nnx_cached 10 minutes, any other run 10 ms (a fake run takes longer; the
# estimator scales unseen runs by what the seen ones took, so the first chunk cannot reach ppo_nnx_cached)
LONG_NNX = "\n\ndef prior_ms(config, *args):\n    return 600000 if config.script == 'ppo_nnx_cached' else 10\n"
CHUNK = ("--quick", "--filter", "^exp7__ppo_(linen|nnx_cached)__.*__1$")  # seed 1: (a)'s Linen run, (f)'s NNX one


def sitting(*args, repo=REPO, gpu=FAKE_GPU, tmp_path, env=None):
    """tools/gpu_sitting.sh ARGS in `repo`, with a fake nvidia-smi first on the PATH and $OUT in tmp_path/out."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "nvidia-smi").write_text(gpu)
    (bin_dir / "nvidia-smi").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHON": sys.executable,
           "OUT": str(tmp_path / "out"), "BENCHMARK_MEM_AVAILABLE_KB": str(2**30), **(env or {})}
    return subprocess.run(["bash", str(repo / "tools" / "gpu_sitting.sh"), *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=300)


def sitting_repo(tmp_path):
    repo = fake_repo(tmp_path, {"ppo_linen.py": ECHO_SCRIPT, "ppo_nnx_cached.py": ECHO_SCRIPT})
    (repo / "tools").mkdir()
    shutil.copy(SITTING, repo / "tools" / "gpu_sitting.sh")
    with open(repo / "sweep" / "estimate.py", "a") as f:
        f.write(LONG_NNX)
    return repo


@pytest.fixture(scope="module")
def chunk(tmp_path_factory):
    """One chunk of a 2-minute window on a fake GPU machine: (repo, its tmp folder, the result)."""
    tmp_path = tmp_path_factory.mktemp("chunk")
    repo = sitting_repo(tmp_path)
    return repo, tmp_path, sitting("run", 2, *CHUNK, repo=repo, tmp_path=tmp_path,
                                   env={"BENCHBACK_GIT_COMMIT": "f" * 40})


def test_a_chunk_runs_what_fits_its_window_into_a_folder_named_after_the_gpu_and_packs_it(chunk):
    repo, tmp_path, result = chunk
    assert result.returncode == 0, result.stdout + result.stderr
    assert "gpu_sitting.sh: NVIDIA Test GPU; a chunk of 1 min into" in result.stdout
    assert "1 runs finished, 0 failed, 1 not started (--max-minutes 1)" in result.stdout
    archive = tmp_path / "out" / "gpu-nvidia-test-gpu-quick.tar.gz"
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        records = tar.extractfile("gpu-nvidia-test-gpu-quick/records.txt").read().decode().splitlines()
        finished = [line.split()[0] for line in records if line.split()[1] == "finished"]
        system = tar.extractfile("gpu-nvidia-test-gpu-quick/system.json").read().decode()
    assert finished == ["exp7__ppo_linen__jit__CartPole-v1__small__1"]
    assert {name.split("/")[0] for name in names} == {"gpu-nvidia-test-gpu-quick"} and not any(
        name.endswith(".lock") for name in names)
    assert '"name": "NVIDIA Test GPU"' in system and '"git_commit": "' + "f" * 40 in system
    workload = (repo / "results" / "gpu-nvidia-test-gpu-quick" / "workload.json").read_text()
    assert '"iterations": 10' in workload  # --quick's: the options reach benchmark.sh


def test_unpacking_a_chunk_brings_its_folder_into_results_and_the_next_chunk_resumes_there(chunk, tmp_path):
    repo, chunk_tmp, _ = chunk
    archive = chunk_tmp / "out" / "gpu-nvidia-test-gpu-quick.tar.gz"
    results = tmp_path / "results"
    result = sitting("unpack", archive, results, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("gpu-nvidia-test-gpu-quick (1 runs finished)")
    assert finished_runs(results / "gpu-nvidia-test-gpu-quick") == ["exp7__ppo_linen__jit__CartPole-v1__small__1"]
    # the next window's chunk, in a copy of the repository holding that folder, runs only what is left
    copy = tmp_path / "next"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "sweep" / "estimate.py", "a") as f:  # the next window is long enough for the 10-minute run
        f.write("\n\ndef prior_ms(config, *args):\n    return 10\n")
    shutil.rmtree(copy / "results" / "gpu-nvidia-test-gpu-quick")
    shutil.copytree(results / "gpu-nvidia-test-gpu-quick", copy / "results" / "gpu-nvidia-test-gpu-quick")
    second = sitting("run", 2, *CHUNK, repo=copy, tmp_path=tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "2 runs selected, 1 already finished, 1 to run" in second.stdout
    again = sitting("unpack", tmp_path / "out" / "gpu-nvidia-test-gpu-quick.tar.gz", results, tmp_path=tmp_path)
    assert again.returncode == 0, again.stderr
    assert len(finished_runs(results / "gpu-nvidia-test-gpu-quick")) == 2
    # the first chunk's archive is older than the folder now: refused, nothing replaced
    older = sitting("unpack", archive, results, tmp_path=tmp_path)
    assert older.returncode == 2 and "lacks: an older chunk; nothing replaced" in older.stderr
    assert len(finished_runs(results / "gpu-nvidia-test-gpu-quick")) == 2


def test_the_command_for_a_window_names_the_commit_and_passes_the_options(tmp_path):
    repo = tmp_path / "repo"
    (repo / "tools").mkdir(parents=True)
    shutil.copy(SITTING, repo / "tools" / "gpu_sitting.sh")
    git = lambda *args: subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    git("add", "tools")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "tools")
    commit = git("rev-parse", "HEAD").stdout.strip()
    result = sitting("command", 9, "--filter", "^exp7__", repo=repo, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"BENCHBACK_GIT_COMMIT={commit} bash tools/gpu_sitting.sh run 9 --filter \\^exp7__\n"
    (repo / "results").mkdir()
    (repo / "results" / "sweep.txt").write_text("a sweep's output does not count\n")
    assert sitting("command", 9, repo=repo, tmp_path=tmp_path).returncode == 0
    (repo / "tools" / "new.py").write_text("")
    assert_sitting_error(sitting("command", 9, repo=repo, tmp_path=tmp_path), "commit first")


def assert_sitting_error(result, expected):
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("gpu_sitting.sh: "), result.stderr
    assert expected in result.stderr, result.stderr


def bad_archive(tmp_path, folders):
    """An archive of the given folders, each with a finished.txt."""
    for folder in folders:
        (tmp_path / "made" / folder).mkdir(parents=True)
        (tmp_path / "made" / folder / "finished.txt").write_text("a\n")
    archive = tmp_path / "bad.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for folder in folders:
            tar.add(tmp_path / "made" / folder, arcname=folder)
    return archive


@pytest.mark.parametrize("args,gpu,expected", [
    (["run", "2"], NO_GPU, "no NVIDIA GPU here (nvidia-smi lists none)"),
    (["run", "0"], FAKE_GPU, "run needs a positive number of minutes, not '0'"),
    (["run"], FAKE_GPU, "run needs a positive number of minutes, not ''"),
    (["command", "x"], FAKE_GPU, "command needs a positive number of minutes, not 'x'"),
    (["unpack", "/nonexistent.tar.gz"], FAKE_GPU, "unpack needs an archive made by 'run'"),
    (["unpack", "two"], FAKE_GPU, "holds no single gpu-<model> folder"),
    (["unpack", "other"], FAKE_GPU, "holds no single gpu-<model> folder"),
    (["sit"], FAKE_GPU, "needs 'command MINUTES [options]', 'run MINUTES [options]' or 'unpack ARCHIVE"),
])
def test_bad_input_to_the_sitting_is_one_line_and_nothing_is_written(args, gpu, expected, tmp_path):
    archives = {"two": ["gpu-a", "gpu-b"], "other": ["cpu-2core"]}
    if args[-1] in archives:
        args = [args[0], bad_archive(tmp_path, archives[args[-1]]), tmp_path / "results"]
    assert_sitting_error(sitting(*args, gpu=gpu, tmp_path=tmp_path), expected)
    assert not (tmp_path / "out").exists() and not (tmp_path / "results").exists()


def test_the_commit_named_for_a_copy_sent_away_is_recorded_instead_of_gits(monkeypatch):
    monkeypatch.setenv("BENCHBACK_GIT_COMMIT", "a" * 40)
    assert machine.git_state() == {"git_commit": "a" * 40, "git_dirty": None}
    monkeypatch.delenv("BENCHBACK_GIT_COMMIT")
    assert re.fullmatch(r"[0-9a-f]{40}", machine.git_state()["git_commit"])


# plot.py ON A GPU SWEEP
GPU_SYSTEM = {"cpu": "Intel(R) Xeon(R) Processor", "cpu_count": 16, "python": "3.12.3", "hostname": "gpu-node",
              "gpu": {"name": "NVIDIA H200", "driver": "580.159.04", "count": 1},
              "packages": {"jax": "0.11.2", "flax": "0.12.10", "torch": "2.11.0"}, "command": "benchmark.sh --grid gpu"}
CPU_SYSTEM = {"cpu": "AMD EPYC", "cpu_count": 2, "gpu": None, "python": "3.11.7", "hostname": "cpu-node",
              "packages": {"jax": "0.10.2", "flax": "0.12.8", "torch": "2.13.0"}, "command": "benchmark.sh --only exp7"}
# steady iteration (s) per variant: on the CPU torch 3x Linen, on the GPU 20x (and Linen 5x faster than on the CPU)
STEADY = {"cpu": {("ppo_linen", "jit"): 0.1, ("ppo_torch", "env-jit"): 0.3},
          "gpu": {("ppo_linen", "jit"): 0.02, ("ppo_torch", "env-jit"): 0.4}}


def write_sweep(folder, machine, iterations):
    for (variant, mode), steady in STEADY[machine].items():
        seconds = [10.0] + [1.5 * steady] * 7 + [steady] * (iterations - 8)
        write_run(folder / "runs" / "exp7" / f"exp7__{variant}__{mode}__CartPole-v1__small__1", seconds,
                  variant=variant, compile_mode=mode)
    write_json(folder / "system.json", GPU_SYSTEM if machine == "gpu" else CPU_SYSTEM)
    return folder


@pytest.fixture(scope="module")
def gpu_and_cpu(tmp_path_factory):
    root = tmp_path_factory.mktemp("gpu_plot")
    return write_sweep(root / "gpu-nvidia-h200", "gpu", 16), write_sweep(root / "cpu-2core", "cpu", 100), root


def test_the_report_of_a_gpu_sweep_names_the_gpu_and_the_images_versions(gpu_and_cpu):
    gpu, _, _ = gpu_and_cpu
    result = run_plot(gpu)
    assert result.returncode == 0, result.stderr
    report = (gpu / "REPORT.md").read_text()
    assert "**GPU:** NVIDIA H200 (driver 580.159.04) ×1" in report and "jax 0.11.2, flax 0.12.10, torch 2.11.0" in report
    sizes = report.split("## Does the ranking hold at every model size? (exp7)")[1]
    assert re.search(r"\| small \| torch \(env-jit\) \| 1 \| [^|]+ \| 20\.00× \|", sizes), sizes


def test_compare_puts_each_sides_steady_iteration_relative_to_its_fastest_whatever_the_run_lengths(gpu_and_cpu):
    gpu, cpu, root = gpu_and_cpu
    result = run_plot("--compare", cpu, "--vs", gpu, "--out", root / "compare")
    assert result.returncode == 0, result.stderr
    steady = (root / "compare" / "REPORT.md").read_text().split("### Steady iteration on each side")[1]
    assert "| small | CartPole-v1 | linen (jit) | async | 0.1 | 1.00× | 0.02 | 1.00× | 5.00× |" in steady
    assert "| small | CartPole-v1 | torch (env-jit) | async | 0.3 | 3.00× | 0.4 | 20.00× | 0.75× |" in steady


def test_the_help_gives_the_gpu_grids_run_counts(gpu_runs):
    text = benchmark("--help").stdout.split("--grid gpu, ")[1].split("\n--grid ")[0]
    counts = {exp: sum(run["exp"] == exp for run in gpu_runs)
              for exp in ("warmup", "exp7", "exp5", "exp8", "exp14", "exp12")}
    for exp, count in counts.items():  # an experiment on several lines (exp7's parts of the order): their sum
        listed = re.findall(rf"^  {exp} +(\d+) runs? ", text, re.M)
        assert listed and sum(map(int, listed)) == count, (exp, listed, count)
    groups = sum(run["exp"] == "exp6" for run in gpu_runs)
    assert re.search(rf"^  exp6 +{groups} groups ", text, re.M)
