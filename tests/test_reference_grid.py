"""--grid reference, the README's CPU columns in one grid: the runs it holds (each part's, from its experiment's own
definition, at 3 seeds), their workloads and steady windows, its estimate, resume into one folder, shards, and
--only generation; all in this process, through the planner as benchmark.sh calls it."""
import contextlib
import io
import itertools
import json
from collections import Counter

import pytest

from sweep import __main__ as planner, grids
from sweep import variants as v
from sweep.experiments import EXP1, EXP5, EXP7, EXP8, EXP12, GRID_ENVS, STUDY_COMPILED, WARMUP
from sweep.plan import Plan
from sweep.workload import Workload

REFERENCE = ["--grid", "reference"]
SEEDS = (1, 2, 3)


def reference_plan(*args, out="/reference/never-made"):
    return Plan([*REFERENCE, "--out", out, *args], "benchmark.sh", "/", "python", 2, 2)


def cells(runs):
    """Counter of (exp, script, mode, env, size, number of envs, seed) over runs."""
    return Counter((r.config.exp, r.config.script, r.config.mode, r.config.env, r.config.size, r.config.num_envs,
                    r.seed) for r in runs)


def expected_cells():
    """Each part's designs x envs x sizes (x numbers of envs) as its experiment defines them, at 3 seeds; the
    warm-up runs once."""
    configs = [(exp.name, variant, env, size, n) for exp, envs, sizes, variants, n in (
        (EXP7, EXP7.ENVS, ("small", "large"), EXP7.VARIANTS, 32),
        (EXP1, GRID_ENVS, ("small",), STUDY_COMPILED, 32),
        (EXP8, EXP8.ENVS[:1], ("small",), EXP8.VARIANTS, 1),
        (EXP12, ("hopper",), ("small",), EXP12.JAX_ENV_VARIANTS, EXP12.CPU_WORKLOAD[0]),
        (EXP12, ("Hopper-v5",), ("small",), EXP12.GYMNASIUM_VARIANTS, EXP12.CPU_WORKLOAD[0]),
    ) for variant, env, size in itertools.product(variants, envs, sizes)]
    configs += [(EXP5.name, variant, env, "small", n) for variant, env, n in itertools.product(
        EXP5.VARIANTS, EXP5.ENVS, (EXP5.NUM_ENVS[0], EXP5.NUM_ENVS[-1])) if EXP5.has(variant, env, n)]
    expected = Counter((exp, variant.script, variant.mode, env, size, n, seed)
                       for exp, variant, env, size, n in configs for seed in SEEDS)
    return expected + Counter((WARMUP.name, variant.script, variant.mode, "CartPole-v1", "small", 32, 1)
                              for variant in STUDY_COMPILED)


def plan_command(*args):
    """The planner's plan command for benchmark.sh ARGS: its exit status, stdout and stderr."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        status = planner.main(["plan", "/reference/plan", "/", "benchmark.sh", "--", *args])
    return status, stdout.getvalue(), stderr.getvalue()


def test_the_grid_holds_each_parts_designs_envs_and_sizes_at_three_seeds_and_the_warmup_once():
    assert cells(reference_plan().selected) == expected_cells()


def test_torch_on_its_own_env_is_in_exp5s_cells_at_8_and_2048_envs():
    runs = reference_plan("--only", "exp5").selected
    native = {(r.config.mode, r.config.num_envs) for r in runs if r.config.variant.backend == v.TORCH_ENV}
    assert native == {("eager", 8), ("compile", 8), ("eager", 2048), ("compile", 2048)}


def test_every_run_keeps_at_least_three_iterations_after_8_for_its_steady_median_and_the_small_ones_100():
    plan = reference_plan()
    iterations = {(r.config.exp, r.config.size): plan.workload.iterations_of(r.config) for r in plan.selected}
    assert min(iterations.values()) >= 11
    assert iterations[("exp7", "small")] == iterations[("exp1", "small")] == 100  # the study's totals


def test_exp12s_runs_take_its_cpu_sittings_workload_and_the_gpu_grids_keep_brax_s():
    plan = reference_plan("--only", "exp12")
    config = plan.selected[-1].config
    assert (config.num_envs, plan.workload.num_steps_of(config), *plan.workload.update_of(config)) == \
        EXP12.CPU_WORKLOAD
    gpu = Plan(["--grid", "gpu", "--only", "exp12"], "benchmark.sh", "/", "python", 16, 16)
    assert {gpu.workload.num_steps_of(r.config) for r in gpu.selected if r.config.exp == "exp12"} == \
        {EXP12.GPU_NUM_STEPS}


def test_the_estimate_comes_before_the_runs_and_a_resume_skips_the_finished_ones(tmp_path, capsys):
    plan = reference_plan(out=str(tmp_path))
    finished = plan.selected[5].name
    (tmp_path / "records.txt").write_text(f"{finished} finished 0 60000 0.1 logs/exp7/{finished}.log\n")
    (tmp_path / "workload.json").write_text(plan.workload.json())
    folder = tmp_path / "plan"
    folder.mkdir()
    plan.save(str(folder))
    assert planner.start(str(folder)) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{len(plan.selected)} runs selected, 1 already finished, {len(plan.selected) - 1}")
    assert out[1].startswith(f"estimated time for the {len(plan.selected) - 1} runs: about ")
    todo = (folder / "todo").read_text().splitlines()
    assert len(todo) == len(plan.selected) - 1 and finished not in {line.split("\t")[0] for line in todo}


@pytest.mark.parametrize("n", [2, 5])
def test_shards_partition_the_grid_and_each_gets_the_warmup_runs(n):
    plan = reference_plan()
    warmup = [run for run in plan.selected if run.config.experiment.prepares]
    shards = [plan.select((k, n)) for k in range(1, n + 1)]
    assert all(shard[:len(warmup)] == warmup for shard in shards)
    rest = [run for shard in shards for run in shard[len(warmup):]]
    assert sorted(run.index for run in rest) == sorted(run.index for run in plan.selected[len(warmup):])


def test_only_generation_keeps_the_small_model_dqn_and_warmup_runs_alone():
    generation = cells(reference_plan("--only", "generation").selected)
    kept = {key: count for key, count in expected_cells().items()
            if key[0] in (WARMUP.name, EXP8.name) or key[:1] + key[4:5] == (EXP7.name, "small")}
    assert generation == kept


@pytest.mark.parametrize("args, line", [
    ([*REFERENCE, "--only", "exp9"], "--only exp9: no run of exp9 in this grid"),
    (["--only", "generation"], "--only generation selects parts of --grid reference, not of --grid default"),
    ([*REFERENCE, "--quick"], "--grid reference has no --quick"),
    (["--grid", "references"], "--grid needs study, default, gpu or reference, not 'references'"),
])
def test_a_bad_selection_of_the_grid_is_one_error_line(args, line):
    status, stdout, stderr = plan_command("--dry-run", *args)
    assert status == 2 and stdout == ""
    assert stderr.startswith(f"benchmark.sh: {line}") and stderr.count("\n") == 1


def test_a_gpu_folder_recorded_before_exp12s_own_iterations_resumes():
    workload = Workload.of(False, grid="gpu")
    recorded = {key: value for key, value in json.loads(workload.json()).items() if key != "exp12_iterations"}
    assert workload.accepts(recorded)
    assert not Workload.of(False, grid="reference").accepts(json.loads(workload.json()))


def test_the_selections_name_parts_of_their_grids():
    for name, (grid, letters) in grids.SELECTIONS.items():
        assert set(letters) <= {part.letter for part in grids.PARTS[grid]}, name
