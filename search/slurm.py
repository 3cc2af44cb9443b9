"""--slurm K: K workers as a SLURM job array sharing the study folder (its journal), then one job that finishes the
study (the re-evaluation, trials.csv, the report) once the array has ended: the same command, resumed."""
import os
import shlex
import shutil
import subprocess
import sys

from search import Refused

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def without_slurm(argv: list) -> list:
    """argv less --slurm K and --sbatch-options WORDS (either spelling, --flag value or --flag=value)."""
    kept, skip = [], False
    for word in argv:
        if skip:
            skip = False
        elif word in ("--slurm", "--sbatch-options", "--sbatch_options"):
            skip = True
        elif not word.startswith(("--slurm=", "--sbatch-options=", "--sbatch_options=")):
            kept.append(word)
    return kept


def job_script(argv: list, study_dir: str, array: bool, options: list) -> str:
    """A job script, run from where tune.py was: an array task runs one worker (--trials-only, its index from
    SLURM); the finishing job the command itself."""
    out = os.path.join(os.path.abspath(study_dir), "slurm")
    lines = ["#!/bin/bash", "#SBATCH --job-name=benchback-tune",
             f"#SBATCH --output={out}/%A_%a.out" if array else f"#SBATCH --output={out}/%j-finish.out"]
    lines += [f"#SBATCH {word}" for word in options]
    words = [sys.executable, os.path.join(ROOT, "tune.py"), *argv]
    task = ' --trials-only --worker-index "$SLURM_ARRAY_TASK_ID"' if array else ""
    script_at = next(index for index, word in enumerate(words) if word.endswith(".py") and index > 1)
    command = shlex.join(words[:script_at]) + task + " " + shlex.join(words[script_at:])
    return "\n".join(lines + ["set -euo pipefail", f"cd {shlex.quote(os.getcwd())}", f"exec {command}", ""])


def sbatch(path: str, *words: str) -> str:
    submitted = subprocess.run(["sbatch", "--parsable", *words, path], capture_output=True, text=True)
    if submitted.returncode != 0:
        error = (submitted.stderr.strip().splitlines() or ["no message"])[-1]
        raise Refused(f"sbatch refused {path}: {error}")
    return submitted.stdout.strip().split(";")[0]


def submit(options, argv: list, study_dir: str):
    """Writes STUDY/tune-workers.sbatch and STUDY/tune-finish.sbatch, submits the array and, after it, the finish."""
    if not shutil.which("sbatch"):
        raise Refused("--slurm needs sbatch (SLURM) on the PATH")
    try:
        sbatch_words = shlex.split(options.sbatch_options)
    except ValueError as error:
        raise Refused(f"--sbatch-options: {error}") from None
    if any(word.startswith(("-a", "--array")) for word in sbatch_words):
        raise Refused("--sbatch-options: the array is set by --slurm K")
    argv = without_slurm(argv)
    os.makedirs(os.path.join(study_dir, "slurm"), exist_ok=True)
    workers, finish = (os.path.join(study_dir, f"tune-{kind}.sbatch") for kind in ("workers", "finish"))
    for path, array in ((workers, True), (finish, False)):
        with open(path, "w") as f:
            f.write(job_script(argv, study_dir, array, sbatch_words))
    array_job = sbatch(workers, f"--array=0-{options.slurm - 1}")
    finish_job = sbatch(finish, f"--dependency=afterany:{array_job}")
    quoted = shlex.quote(study_dir)
    print(f"submitted SLURM job {array_job}: {options.slurm} workers sharing {quoted}; job {finish_job} finishes the "
          "study after them")
    print(f"watch it:  squeue -j {array_job},{finish_job}; tail -f {quoted}/slurm/*.out")
    print("resume:    the same command again (finished trials are kept)")
