"""--slurm N: the selection as a SLURM job array (slurm/sweep.sbatch filled in), task K running --shard K/N into
OUT/shard-K; written to OUT/sweep.sbatch and submitted with sbatch, or printed with --dry-run."""
import os
import re
import shutil
import subprocess
import sys

from sweep import grids
from sweep.estimate import duration_text
from sweep.runs import select
from sweep.shell import shell_line, shell_quote
from sweep.options import Refused

TEMPLATE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "slurm", "sweep.sbatch")


def check_options(options):
    """--slurm needs --out and makes the shards itself; sbatch words must fit a #SBATCH line."""
    tasks, sbatch_options, shard = options.slurm, options.sbatch_options, options.shard
    if tasks is None:
        if sbatch_options:
            raise Refused("the words after -- go to sbatch and need --slurm N")
        return
    if options.max_minutes:
        raise Refused("--max-minutes stops a sweep on this machine between runs; with --slurm give sbatch a time "
                      "limit (-- --time ...) and each run --timeout")
    if not options.out_given:
        raise Refused("--slurm needs --out DIR: the sweep folder, fixed so that resubmitting resumes")
    if shard != (1, 1):
        raise Refused("--slurm makes the shards itself (task K runs --shard K/N); drop --shard")
    for word in sbatch_options:
        if re.search('["\\\\\n]', word):
            raise Refused(f"sbatch option '{word}': no double quote, backslash or newline (it goes on a #SBATCH line)")
        if word.startswith(("-a", "--array")):
            raise Refused(f"sbatch option '{word}': the array is set by --slurm N")


def carried_options(options) -> list:
    """The selection and workload options of every task, in a fixed order."""
    carried = ["--grid", options.grid, "--repeats", str(options.repeats)] + ["--quick"] * options.quick
    carried += ["--only", options.only] * bool(options.only) + ["--filter", options.filter] * bool(options.filter)
    workload = options.workload
    carried += ["--iterations", str(workload.iterations), "--eager-iterations", str(workload.eager_iterations),
                "--exp5-iterations", str(workload.exp5_iterations), "--exp7-large-iterations",
                str(workload.exp7_large_iterations)]
    return carried + ["--timeout", str(options.timeout)] * bool(options.timeout)


def array_script(options, root, python) -> str:
    """The array script: the template with its fields filled in."""
    try:
        with open(TEMPLATE) as f:
            script = f.read().rstrip("\n")
    except OSError:
        raise Refused("--slurm needs the template slurm/sweep.sbatch of the repository") from None
    sbatch_line = " ".join(f'"{word}"' for word in [f"--array=1-{options.slurm}",
                                                     f"--output={options.out}/slurm/%A_%a.out",
                                                     *options.sbatch_options])
    fields = {"@SBATCH_OPTIONS@": sbatch_line, "@ROOT@": shell_quote(root), "@PYTHON@": shell_quote(python),
              "@TASKS@": str(options.slurm), "@SWEEP@": shell_quote(options.out),
              "@OPTIONS@": shell_line(carried_options(options))}
    for name, value in fields.items():
        script = script.replace(name, value)
    return script.replace("@COMMAND@", options.command_line)  # last: the user's words replace nothing


def tasks_summary(options, grid, estimator, min_seeds, machine_kind) -> str:
    """'N tasks of R runs each (the warm-up runs in every task); the longest about T on M', M the machine kind that the
    built-in estimates are for (Plan.machine_kind: the grid's, not the nodes', which the planner cannot see)."""
    counts, longest = [], 0
    for task in range(1, options.slurm + 1):
        runs = select(grid, options.repeats, min_seeds, grids.kept(options.only, options.choices), options.pattern,
                      (task, options.slurm))
        counts.append(len(runs))
        longest = max(longest, estimator.total_ms(run.config for run in runs))
    tasks, each = (f"{options.slurm} tasks", " each") if options.slurm > 1 else ("1 task", "")
    runs = str(counts[0]) if min(counts) == max(counts) else f"{min(counts)} to {max(counts)}"
    return (f"{tasks} of {runs} runs{each} (the warm-up runs in every task); the longest about "
            f"{duration_text(longest // 1000)} on {machine_kind} (rough: built-in figures, see docs/method.md)")


def check_tasks(options, selected):
    """Every task needs a run besides the warm-up runs."""
    others = sum(not run.config.experiment.prepares for run in selected)
    if others < options.slurm:
        raise Refused(f"--slurm {options.slurm}: the selection holds {others} runs besides the warm-up runs, fewer "
                      "than the tasks")


def submit(options, script, summary):
    """Writes OUT/sweep.sbatch and submits it; with --dry-run prints it (and the tasks' summary on stderr)."""
    if options.dry_run:
        print(script)
        print(summary, file=sys.stderr)
        return
    if not shutil.which("sbatch"):
        raise Refused("--slurm needs sbatch (SLURM) on the PATH; with --dry-run it prints the job array instead")
    path, slurm_dir = os.path.join(options.out, "sweep.sbatch"), os.path.join(options.out, "slurm")
    previous = open(path).read() if os.path.isfile(path) else None
    exec_line = next(line for line in script.splitlines() if line.startswith("exec "))
    if previous is not None and exec_line not in previous.splitlines():
        raise Refused(f"{options.out} was submitted with another task count or selection (see {path}): resubmit "
                      "that file with sbatch, or use another --out")
    os.makedirs(slurm_dir, exist_ok=True)  # the tasks' output goes there: it must exist when they start
    with open(path, "w") as f:
        f.write(script + "\n")
    submitted = subprocess.run(["sbatch", "--parsable", path], capture_output=True, text=True)
    if submitted.returncode != 0:
        if previous is None:
            os.remove(path)
        else:
            with open(path, "w") as f:
                f.write(previous)
        error = (submitted.stderr.strip().splitlines() or ["no message"])[-1]
        raise Refused(f"sbatch refused the job array: {error}")
    job, quoted = submitted.stdout.strip().split(";")[0], shell_quote(options.out)  # "<job id>[;<cluster>]"
    print(f"submitted SLURM job {job}: {summary}")
    print(f"task K writes into {quoted}/shard-K, its output into {quoted}/slurm/{job}_K.out")
    print(f"watch it:  squeue -j {job}; tail -f {quoted}/slurm/{job}_*.out")
    print(f"resume:    sbatch {quoted}/sweep.sbatch (once the job has ended; finished runs are skipped)")
    print(f"report:    python plot.py {quoted}/shard-*")
