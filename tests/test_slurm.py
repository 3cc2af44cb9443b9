"""benchmark.sh --slurm: the job array it writes and submits (dry runs, a stand-in sbatch) and, on a SLURM
cluster (here: tools/local_slurm.sh start), a sweep submitted, one task cancelled midway, and resubmitted."""

import csv
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from test_benchmark import REPO, assert_one_line_error, benchmark, fake_repo, read_lines, records
from test_benchmark import finished_runs as finished_in

# every selection and workload option; `--timeout` shows in no dry-run line, only in the task's command
SELECTION = ["--grid", "study", "--quick", "--repeats", "2", "--only", "exp3", "--filter", "__(small|medium)__",
             "--iterations", "7", "--eager-iterations", "3", "--timeout", "900"]
LOCAL_SLURM = str(REPO / "tools" / "local_slurm.sh")
SBATCH_WORDS = ["--partition=gpu", "--account=me", "--gres=gpu:1", "--time=12:00:00", "--comment=two words"]


def array_script(*args):
    """What `benchmark.sh --slurm ... --dry-run ARGS` prints: the array script (stdout) and its summary (stderr)."""
    result = benchmark("--dry-run", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout, result.stderr


def sbatch_lines(script):
    """The words of the script's #SBATCH lines, as sbatch reads them (quotes stripped)."""
    return [word for line in script.splitlines() if line.startswith("#SBATCH ") for word in shlex.split(line[8:])]


def task_command(script):
    """The words of the script's benchmark.sh command ("$SLURM_ARRAY_TASK_ID" left as it is)."""
    [line] = [line for line in script.splitlines() if line.startswith("exec ")]
    return shlex.split(line)


def run_task(script_path, task, *args):
    """Run an array script as task `task` of its array (None: outside SLURM)."""
    env = {key: value for key, value in os.environ.items() if key != "SLURM_ARRAY_TASK_ID"}
    if task:
        env["SLURM_ARRAY_TASK_ID"] = str(task)
    return subprocess.run(["bash", str(script_path), *args], capture_output=True, text=True, env=env, timeout=300)


def names(lines):
    """The run names of dry-run lines."""
    commands = [shlex.split(line) for line in lines]
    return [words[words.index("--run-name") + 1] for words in commands]


def split_warmup(dry_run_output):
    """The run names of a dry run's output: (the warm-up runs, the others)."""
    lines = dry_run_output.splitlines()
    return [names([line for line in lines if (line.split()[1] == "warmup") == warmup]) for warmup in (True, False)]


@pytest.fixture
def fake_sbatch(tmp_path):
    """A stand-in sbatch on the PATH: records its arguments and the script it was given, prints job id 4242."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "sbatch-calls"
    (bin_dir / "sbatch").write_text(
        "#!/bin/sh\n"
        f'echo "$*" >>{record}\n'
        'if [ -n "${FAIL_SBATCH:-}" ]; then echo "sbatch: error: $FAIL_SBATCH" >&2; exit 1; fi\n'
        f'for last; do :; done; cp "$last" {tmp_path}/submitted.sbatch\n'
        "echo '4242;cluster'\n"
    )
    (bin_dir / "sbatch").chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}, record


@pytest.fixture
def path_without_sbatch(tmp_path):
    """A PATH holding every command of this one but sbatch (links in one folder)."""
    bin_dir = tmp_path / "no-sbatch-bin"
    bin_dir.mkdir()
    folders = [Path(folder) for folder in os.environ["PATH"].split(os.pathsep) if Path(folder).is_dir()]
    commands = {}
    for entry in (entry for folder in folders for entry in folder.iterdir()):
        commands.setdefault(entry.name, entry)  # the first on the PATH, as the shell finds it
    for name, entry in commands.items():
        if name != "sbatch":
            (bin_dir / name).symlink_to(entry)
    return {"PATH": str(bin_dir)}


# THE ARRAY SCRIPT (no SLURM needed)
def test_the_array_script_has_n_tasks_each_on_a_node_of_its_own_writing_its_output_into_the_sweep(tmp_path):
    out = tmp_path / "sweep"
    script, summary = array_script("--slurm", "3", *SELECTION, "--out", str(out), "--", *SBATCH_WORDS)
    words = sbatch_lines(script)
    assert words[:4] == ["--job-name=benchback", "--exclusive", "--array=1-3", f"--output={out}/slurm/%A_%a.out"]
    assert words[4:] == SBATCH_WORDS  # after the defaults, so that they override them
    assert script.startswith("#!/bin/bash\n")
    command = task_command(script)
    assert command[:6] == ["exec", "bash", "benchmark.sh", "--shard", "$SLURM_ARRAY_TASK_ID/3", "--out"]
    assert command[6] == f"{out}/shard-$SLURM_ARRAY_TASK_ID"
    assert command[command.index("--timeout") + 1] == "900"  # the one option a dry-run line does not show
    assert summary.startswith("3 tasks of ") and "the longest about" in summary and len(summary.splitlines()) == 1
    assert not out.exists()  # a dry run writes nothing


@pytest.mark.parametrize("grid, machine", [("study", "on a 2-core CPU"), ("gpu", "on one H100 GPU")])
def test_the_tasks_summary_names_the_machine_its_estimate_is_for_as_the_dry_run_does(tmp_path, grid, machine):
    """The longest task's estimate is the built-in figures of the grid's machine kind, as a plain dry run says."""
    _, summary = array_script("--slurm", "2", "--grid", grid, "--out", str(tmp_path / "sweep"))
    assert "the longest about " in summary and f" {machine} (rough" in summary, summary
    plain = benchmark("--dry-run", "--grid", grid)
    assert f"estimated time {machine}: " in plain.stderr, plain.stderr


@pytest.mark.parametrize("tasks, options", [(3, SELECTION), (2, ["--only", "exp4"])],
                         ids=["every-option", "defaults"])
def test_every_task_runs_its_shard_with_every_option_and_the_tasks_cover_the_selection_once(tmp_path, tasks, options):
    out = tmp_path / "sweep"
    script, _ = array_script("--slurm", str(tasks), *options, "--out", str(out))
    path = tmp_path / "sweep.sbatch"
    path.write_text(script)
    whole = split_warmup(benchmark("--dry-run", *options, "--out", str(out)).stdout)
    covered = []
    for task in range(1, tasks + 1):
        listed = run_task(path, task, "--dry-run")
        assert listed.returncode == 0, listed.stderr
        shard = benchmark("--dry-run", *options, "--shard", f"{task}/{tasks}", "--out", f"{out}/shard-{task}")
        assert listed.stdout == shard.stdout  # the same runs, the same commands, into OUT/shard-K
        warmup, others = split_warmup(listed.stdout)
        assert warmup == whole[0]  # every task warms up
        covered += others
    assert Counter(covered) == Counter(whole[1]) and len(whole[1]) > tasks  # each run once, none lost


def test_the_array_script_runs_only_as_a_slurm_task_and_the_template_not_at_all(tmp_path):
    script, _ = array_script("--slurm", "2", "--quick", "--out", str(tmp_path / "sweep"))
    path = tmp_path / "sweep.sbatch"
    path.write_text(script)
    for result, expected in [(run_task(path, None), "no SLURM_ARRAY_TASK_ID"),
                             (run_task(path, 1, "--shard", "1/1"), "the only argument it takes is --dry-run"),
                             (run_task(REPO / "slurm" / "sweep.sbatch", 1), "this is the template")]:
        assert result.returncode == 2 and result.stderr.splitlines() == [result.stderr.strip()], result.stderr
        assert result.stderr.startswith("sweep.sbatch: ") and expected in result.stderr


# SUBMITTING (a stand-in sbatch)
def test_slurm_writes_the_array_script_submits_it_and_says_how_to_watch_resume_and_plot(tmp_path, fake_sbatch):
    env, record = fake_sbatch
    out = tmp_path / "sweep"
    args = ["--slurm", "2", "--quick", "--only", "exp2", "--out", str(out), "--", "--partition=cpu"]
    result = benchmark(*args, env=env)
    assert result.returncode == 0, result.stderr
    written = (out / "sweep.sbatch").read_text()
    assert written == (tmp_path / "submitted.sbatch").read_text()
    without_command = lambda script: [line for line in script.splitlines() if not line.startswith("# written by: ")]
    assert without_command(written) == without_command(array_script(*args)[0])  # what --dry-run prints
    assert read_lines(record) == [f"--parsable {out}/sweep.sbatch"]
    assert (out / "slurm").is_dir()  # where the tasks' output goes: it must exist before they start
    lines = result.stdout.splitlines()
    assert lines[0].startswith("submitted SLURM job 4242: 2 tasks of ")
    assert f"squeue -j 4242; tail -f {out}/slurm/4242_*.out" in result.stdout
    assert f"sbatch {out}/sweep.sbatch" in result.stdout and f"python plot.py {out}/shard-*" in result.stdout
    again = benchmark(*args[:-1], "--time=2:00:00", env=env)  # the same sweep, other sbatch options: a resubmission
    assert again.returncode == 0, again.stderr
    assert len(read_lines(record)) == 2 and '"--time=2:00:00"' in (out / "sweep.sbatch").read_text()


@pytest.mark.parametrize("changed", [["--slurm", "3"], ["--filter", "CartPole"], ["--iterations", "5"]],
                         ids=["task-count", "selection", "workload"])
def test_a_resubmission_with_another_task_count_selection_or_workload_is_refused(tmp_path, fake_sbatch, changed):
    env, record = fake_sbatch
    out = tmp_path / "sweep"
    first = ["--slurm", "2", "--quick", "--only", "exp2", "--out", str(out)]
    assert benchmark(*first, env=env).returncode == 0
    submitted = (out / "sweep.sbatch").read_text()
    result = benchmark(*first, *changed, env=env)
    assert_one_line_error(result, "was submitted with another task count or selection")
    assert (out / "sweep.sbatch").read_text() == submitted and len(read_lines(record)) == 1


def test_a_job_that_sbatch_refuses_stops_with_its_error_in_one_line_and_leaves_no_array_script(tmp_path, fake_sbatch):
    env, record = fake_sbatch
    out = tmp_path / "sweep"
    result = benchmark("--slurm", "2", "--quick", "--out", str(out), env={**env, "FAIL_SBATCH": "invalid partition"})
    assert_one_line_error(result, "sbatch refused the job array: sbatch: error: invalid partition")
    assert not (out / "sweep.sbatch").exists() and len(read_lines(record)) == 1


def test_slurm_without_sbatch_on_the_path_stops_with_one_line(tmp_path, path_without_sbatch):
    out = tmp_path / "sweep"
    result = benchmark("--slurm", "2", "--quick", "--out", str(out), env=path_without_sbatch)
    assert_one_line_error(result, "--slurm needs sbatch (SLURM) on the PATH")
    assert not out.exists()
    assert benchmark("--slurm", "2", "--quick", "--out", str(out), "--dry-run", env=path_without_sbatch).returncode == 0


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--slurm", "0", "--out", "OUT"], "--slurm needs a positive number of tasks"),
        (["--slurm", "two", "--out", "OUT"], "--slurm needs a positive number of tasks"),
        (["--slurm", "-1", "--out", "OUT"], "--slurm needs a positive number of tasks"),
        (["--slurm", "2", "--shard", "1/2", "--out", "OUT"], "drop --shard"),
        (["--slurm", "2"], "--slurm needs --out DIR"),
        (["--slurm", "40", "--quick", "--only", "exp1", "--out", "OUT"], "fewer than the tasks"),
        (["--slurm", "2", "--out", "OUT", "--", "--array=1-4"], "the array is set by --slurm N"),
        (["--slurm", "2", "--out", "OUT", "--", "-a", "1-4"], "the array is set by --slurm N"),
        (["--slurm", "2", "--out", "OUT", "--", '--comment=say "hi"'], "no double quote, backslash or newline"),
        (["--slurm", "2", "--out", "OUT", "--", "--comment=a\\b"], "no double quote, backslash or newline"),
        (["--quick", "--out", "OUT", "--", "--partition=gpu"], "the words after -- go to sbatch and need --slurm N"),
    ],
)
def test_bad_slurm_options_fail_with_one_line_on_stderr_and_exit_2(tmp_path, args, expected):
    out = tmp_path / "sweep"
    result = benchmark("--dry-run", *[str(out) if arg == "OUT" else arg for arg in args])
    assert_one_line_error(result, expected)
    assert not out.exists()


def test_help_documents_slurm_and_the_shipped_template_is_there():
    result = benchmark("--help")
    assert result.returncode == 0
    for text in ["--slurm N", "-- go to sbatch", "OUT/sweep.sbatch", "slurm/sweep.sbatch", "--exclusive"]:
        assert text in result.stdout, text
    assert (REPO / "slurm" / "sweep.sbatch").exists()


def test_local_slurm_says_in_one_line_whether_its_cluster_runs_and_refuses_an_unknown_command():
    status = subprocess.run([LOCAL_SLURM, "status"], capture_output=True, text=True, timeout=60)
    assert status.returncode in (0, 1) and status.stdout.startswith("local SLURM cluster "), status
    assert len(status.stdout.splitlines()) == 1 and status.stderr == ""
    wrong = subprocess.run([LOCAL_SLURM, "restart"], capture_output=True, text=True)
    assert wrong.returncode == 2 and wrong.stderr == "usage: tools/local_slurm.sh install|start|stop|status\n"


# A REAL CLUSTER: one that answers already, or tools/local_slurm.sh's, started by the tests where they run as root
LOCAL_MARKER = "# written by benchback's tools/local_slurm.sh"
MUNGE_LOG = Path("/var/log/munge/munged.log")
TEST_RUNS = r"^(warmup|exp1)__ppo_(linen|nnx_cached|nnx_tree|equinox)__[a-z]+__CartPole-v1__small__"
WAIT_SECONDS = 900


def cluster_problem():
    """Why no SLURM job can be submitted from here (a one-line skip reason), or None."""
    if not shutil.which("sbatch"):
        return "no sbatch on the PATH (a one-node SLURM cluster here: tools/local_slurm.sh install, then start)"
    try:
        ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        ping = ""
    if " is UP" not in ping:
        return "sbatch is on the PATH but no SLURM controller answers (tools/local_slurm.sh start)"
    return None


def local_cluster_allowed():
    """Whether the tests may start (and restart) tools/local_slurm.sh's cluster here: as root, where no other
    cluster's slurm.conf is installed."""
    conf = Path("/etc/slurm/slurm.conf")
    return os.geteuid() == 0 and (not conf.exists() or LOCAL_MARKER in conf.read_text().splitlines())


@pytest.fixture(scope="module")
def cluster():
    """A cluster to submit to. As root (where no other cluster is configured and SLURM is installed: .ci/run's
    `tools/local_slurm.sh install`; the tests install nothing) tools/local_slurm.sh's one-node cluster, started as on a
    fresh machine, munged's log not there yet, and stopped after the module unless it ran before: yields what `start`
    did. Elsewhere a cluster that answers already (yields None), or the tests skip with one reason line."""
    if not shutil.which("sbatch"):
        pytest.skip("SLURM is not installed: no sbatch on the PATH (tools/local_slurm.sh install installs it)")
    if not local_cluster_allowed():
        if problem := cluster_problem():
            pytest.skip(problem)
        yield None
        return
    was_running = subprocess.run([LOCAL_SLURM, "status"], capture_output=True).returncode == 0
    subprocess.run([LOCAL_SLURM, "stop"], capture_output=True, timeout=120)
    MUNGE_LOG.unlink(missing_ok=True)
    started = subprocess.run([LOCAL_SLURM, "start"], capture_output=True, text=True, timeout=900)
    yield started
    if not was_running:
        subprocess.run([LOCAL_SLURM, "stop"], capture_output=True, timeout=120)


@pytest.mark.slow
@pytest.mark.slurm
def test_local_slurm_starts_its_cluster_where_munged_has_never_written_its_log(cluster):
    if cluster is None:
        pytest.skip("another SLURM cluster is configured here: tools/local_slurm.sh start is not tried")
    assert cluster.returncode == 0, cluster.stderr
    assert cluster.stdout.startswith("local SLURM cluster running: node localhost (") and cluster.stderr == ""
    assert MUNGE_LOG.owner() == "munge"
    assert cluster_problem() is None


# the sweep's scripts in the SLURM tests: stand-ins that take a second or two (their imports and half a second) and
# write a run plot.py reads (the scripts themselves are the smoke runs'; here the array, its shards, cancellation and
# resubmission are under test)
STANDIN_RUN = """import os, sys, time
from events import write_run
option = lambda name, default: sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default
time.sleep(0.5)
script = os.path.basename(__file__)[: -len(".py")]
mode = {"ppo_nnx_cached": "cached", "ppo_nnx_tree": "tree"}.get(script, "jit")
write_run(os.path.join(option("--log-dir", "runs"), option("--run-name", "run")),
          [0.5] * int(option("--num-iterations", "3")), variant=script, compile_mode=mode,
          env_id=option("--env-id", "CartPole-v1"), seed=int(option("--seed", "1")))
"""


@pytest.fixture(scope="module")
def standin_repo(tmp_path_factory):
    """A copy of the sweep whose four test scripts are STANDIN_RUN (tests/events.py beside them)."""
    scripts = {f"{name}.py": STANDIN_RUN for name in ("ppo_linen", "ppo_nnx_cached", "ppo_nnx_tree", "ppo_equinox")}
    events = (REPO / "tests" / "events.py").read_text()
    return fake_repo(tmp_path_factory.mktemp("standin"), {**scripts, "events.py": events})


def submit(out, repo):
    """Submit the test sweep, 2 tasks, into `out` with benchmark.sh --slurm; return the job id."""
    result = benchmark("--slurm", "2", "--quick", "--filter", TEST_RUNS, "--out", str(out), repo=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.split()[3].rstrip(":")


def queued(job):
    """The job's tasks still pending, running or completing."""
    return subprocess.run(["squeue", "-h", "-j", job], capture_output=True, text=True).stdout.strip()


def wait_for(condition, what):
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"waited {WAIT_SECONDS} s for {what}"
        time.sleep(0.5)


def task_states(job):
    """{task: (state, exit code)} of the array's tasks, from slurmctld (which keeps ended jobs for MinJobAge)."""
    lines = subprocess.run(["scontrol", "-o", "show", "job", job], capture_output=True, text=True).stdout.splitlines()
    tasks = [dict(word.split("=", 1) for word in line.split() if "=" in word) for line in lines]
    return {int(task["ArrayTaskId"]): (task["JobState"], task["ExitCode"]) for task in tasks}


def finished_runs(out):
    """Run name -> how many times the records of the shards of `out` say it finished, the warm-up runs apart."""
    return Counter(name for shard in sorted(out.glob("shard-*")) for name in finished_in(shard)
                   if not name.startswith("warmup__"))


def selected_runs():
    """The test sweep's runs, the warm-up runs apart."""
    lines = benchmark("--dry-run", "--quick", "--filter", TEST_RUNS).stdout.splitlines()
    return [name for name in names(lines) if not name.startswith("warmup__")]


def task_output(out, job, task):
    return (out / "slurm" / f"{job}_{task}.out").read_text()


@pytest.fixture(scope="module")
def submitted_sweep(tmp_path_factory, cluster, standin_repo):
    """The test sweep submitted and waited for: (sweep folder, job id)."""
    assert cluster is None or cluster.returncode == 0, cluster.stderr
    out = tmp_path_factory.mktemp("slurm") / "sweep"
    job = submit(out, standin_repo)
    wait_for(lambda: not queued(job), f"job {job}")
    return out, job


@pytest.fixture(scope="module")
def resumed_sweep(tmp_path_factory, cluster, standin_repo):
    """The test sweep submitted, task 1 cancelled midway (one of its two runs finished), then OUT/sweep.sbatch
    resubmitted once the job has ended: (sweep folder, first job, its state when it ended, second job)."""
    assert cluster is None or cluster.returncode == 0, cluster.stderr
    out = tmp_path_factory.mktemp("slurm-resumed") / "sweep"
    job = submit(out, standin_repo)
    shard = out / "shard-1"
    wait_for(lambda: len(records(shard)) >= 2, "task 1's first run after its warm-up run")
    subprocess.run(["scancel", f"{job}_1"], check=True)
    wait_for(lambda: not queued(job), f"job {job}")
    cut = {"records": records(shard), "tasks": task_states(job)}
    resubmitted = subprocess.run(["sbatch", "--parsable", str(out / "sweep.sbatch")], capture_output=True, text=True)
    assert resubmitted.returncode == 0, resubmitted.stderr
    again = resubmitted.stdout.strip().split(";")[0]
    wait_for(lambda: not queued(again), f"job {again}")
    return out, job, cut, again


@pytest.mark.slow
@pytest.mark.slurm
def test_a_submitted_sweep_runs_every_selected_run_exactly_once_across_its_two_tasks(submitted_sweep):
    out, job = submitted_sweep
    assert task_states(job) == {1: ("COMPLETED", "0:0"), 2: ("COMPLETED", "0:0")}
    assert finished_runs(out) == Counter(selected_runs())
    assert len(selected_runs()) == 4
    for task in (1, 2):
        shard = out / f"shard-{task}"
        assert finished_in(shard)[0] == "warmup__ppo_linen__jit__CartPole-v1__small__1"
        assert (shard / "system.json").exists() and finished_in(shard) == [name for name, *_ in records(shard)]
        assert "3 runs selected, 0 already finished, 3 to run" in task_output(out, job, task)


@pytest.mark.slow
@pytest.mark.slurm
def test_a_task_cancelled_midway_is_completed_by_resubmitting_without_running_any_run_twice(resumed_sweep):
    out, job, cut, again = resumed_sweep
    assert cut["tasks"][1][0] == "CANCELLED" and cut["tasks"][2] == ("COMPLETED", "0:0")
    # the warm-up and one of the task's two runs, cut midway: recorded, judged by the resubmitted task's start
    assert [verdict for _, verdict, *_ in cut["records"]] == ["-", "-"], cut
    assert "interrupted" in task_output(out, job, 1)
    assert task_states(again) == {1: ("COMPLETED", "0:0"), 2: ("COMPLETED", "0:0")}
    assert "3 runs selected, 2 already finished, 1 to run" in task_output(out, again, 1)
    assert "3 runs selected, 3 already finished, 0 to run" in task_output(out, again, 2)
    assert finished_runs(out) == Counter(selected_runs())  # each run once, in one shard
    for shard in out.glob("shard-*"):
        assert len(set(finished_in(shard))) == len(finished_in(shard))
    runs = [path for path in out.glob("shard-*/runs/*/*") if path.is_dir()]
    assert sorted(path.name for path in runs if path.parent.name != "warmup") == sorted(selected_runs())
    assert all(len(list(path.glob("events.out.tfevents.*"))) == 1 for path in runs)  # the cut run's folder replaced


@pytest.mark.slow
@pytest.mark.slurm
def test_plot_reads_the_shards_of_a_resumed_sweep_as_one_sweep_with_each_run_once(resumed_sweep, tmp_path):
    out = resumed_sweep[0]
    report = tmp_path / "report"
    result = subprocess.run([sys.executable, str(REPO / "plot.py"), *map(str, sorted(out.glob("shard-*"))),
                             "--out", str(report)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "repeats" not in result.stderr  # no run found twice
    with open(report / "summary.csv", newline="") as summary:
        variants = sorted(row["variant"] for row in csv.DictReader(summary))
    assert variants == ["ppo_equinox", "ppo_linen", "ppo_nnx_cached", "ppo_nnx_tree"]
    assert (report / "REPORT.md").stat().st_size > 0


@pytest.mark.slow
@pytest.mark.slurm
def test_tune_slurm_workers_share_one_study_through_its_journal_and_a_last_job_finishes_it(cluster, tmp_path):
    """tune.py --slurm 2: two array tasks join one study (its journal on the shared folder) and its trials run once
    each; the job after them re-evaluates the best and writes the report."""
    study_dir = tmp_path / "study"
    standin = os.path.join(REPO, "tests", "dqn_standin.py")
    submitted = subprocess.run([sys.executable, os.path.join(REPO, "tune.py"), "--slurm", "2", "--trials", "6",
                                "--sampler", "random", "--eval-seeds", "1", "--out", str(study_dir), standin,
                                "--iteration-seconds", "0.15"], capture_output=True, text=True, timeout=60)
    assert submitted.returncode == 0, submitted.stderr
    array, finish = re.match(r"submitted SLURM job (\d+): .*; job (\d+) finishes", submitted.stdout).groups()
    wait_for(lambda: not queued(f"{array},{finish}"), f"jobs {array} and {finish}")
    with open(study_dir / "trials.csv") as f:
        rows = list(csv.DictReader(f))
    assert [row["number"] for row in rows] == [str(n) for n in range(6)]
    assert all(row["state"] in ("complete", "pruned") for row in rows), rows
    outputs = [(study_dir / "slurm" / f"{array}_{task}.out").read_text() for task in (0, 1)]
    ran = sorted(int(line.split()[1]) for out in outputs for line in out.splitlines() if line.startswith("trial "))
    assert ran == list(range(6)), outputs  # every trial once, whichever task ran it (a task may start late)
    assert task_states(array) == {0: ("COMPLETED", "0:0"), 1: ("COMPLETED", "0:0")}
    assert (study_dir / "evaluation.json").is_file() and (study_dir / "REPORT.md").is_file()
