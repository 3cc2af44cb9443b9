"""The planner's commands, called by benchmark.sh (which holds the loop, the lock and the sweep's record files):

    python -m sweep plan PLAN_FILE CWD COMMAND -- ARGS   parse benchmark.sh's ARGS: --help, --dry-run and --slurm
                                                          are answered here; otherwise the checks before a sweep, and
                                                          the plan written to PLAN_FILE
    python -m sweep start PLAN_FILE                       (OUT locked) check the workload, say what is left to run and
                                                          how long it should take; the runs to do, one line each, in
                                                          PLAN_FILE.todo (name, run folder, log, command; tabs)
    python -m sweep record PLAN_FILE                      OUT/system.json and OUT/env_timing.json
    python -m sweep progress PLAN_FILE NUMBER SECONDS     the progress line's start for run NUMBER (1-based), its ETA;
                                                          with --max-minutes, if the run would end too late SECONDS
                                                          into the invocation: the line that says so, and exit 1
    python -m sweep ended PLAN_FILE NUMBER STATUS MS      whether run NUMBER finished: "finished", or "failed REASON
                                                          LOG", then the line to show; writes an exp6 group's group.json
    python -m sweep group PLAN_FILE NAME                  run the exp6 group NAME's processes
    python -m sweep done PLAN_FILE SECONDS RAN [FAILED ...]
                                                          the sweep's summary (RAN: the runs started, fewer than planned
                                                          where --max-minutes stopped it); exit 1 if a run failed or was
                                                          refused

Each error is one line on stderr (benchmark.sh: ...) and exit status 2.
"""
import json
import os
import shutil
import sys

from sweep import estimate, experiments, groups, options as cli_options, records, slurm
from sweep.grid import at_a_time, command
from sweep.plan import Plan


def plan(path, cwd, command_line, *argv):
    argv = argv[1:] if argv[:1] == ("--",) else argv
    try:
        options = cli_options.parse(argv, command_line, cwd)
        slurm.check_options(options)
    except cli_options.HelpAsked:
        print(cli_options.help_text(), end="")
        return 0
    uses_cores = options.grid in ("default", "gpu")  # exp6's groups run processes side by side
    cores = records.cpus_usable() if uses_cores else 1
    sweep = Plan(list(argv), command_line, cwd, os.environ.get("PYTHON", "python"), cores, os.cpu_count())
    sweep.check_selection()
    if options.slurm:
        slurm.check_tasks(sweep.options, sweep.selected)
        script = slurm.array_script(sweep.options, cli_options.ROOT, sys.executable)
        summary = slurm.tasks_summary(sweep.options, sweep.grid, sweep.estimator, sweep.min_seeds,
                                      sweep.machine_kind)
        slurm.submit(sweep.options, script, summary)
        return 0
    sweep.refuse_oversized(os.environ)
    if options.dry_run:
        print("\n".join(sweep.dry_run_lines()))
        refused = f" ({len(sweep.refused)} refused: memory)" if sweep.refused else ""
        print(f"{len(sweep.selected)} runs{refused}; estimated time on {sweep.machine_kind}: "
              f"{sweep.estimator.left(run.config for run in sweep.selected)} (rough: built-in figures, see "
              "docs/method.md)", file=sys.stderr)
        return 0
    sweep.check_prerequisites()
    sweep.save(path)
    return 0


def start(path):
    sweep = Plan.load(path)
    sweep.check_workload()
    todo = sweep.todo()
    refused = f"{len(sweep.refused)} refused (memory, listed at the end); " if sweep.refused else ""
    print(f"{len(sweep.selected)} runs selected, {len(sweep.selected) - len(todo)} already finished, {len(todo)} to "
          f"run; {refused}output in {sweep.out}")
    sweep.todo_names = [run.name for run in todo]
    sweep.save(path)
    with open(f"{path}.todo", "w") as f:
        f.write("".join(f"{sweep.todo_line(run)}\n" for run in todo))
    if not todo:
        return 0
    sweep.observe_durations()
    left = sweep.estimator.left(run.config for run in todo)
    source = f", from the runs already timed in {sweep.out}" if sweep.estimator.observed_prior_ms else \
        f" (rough: built-in figures for {sweep.machine_kind}; refined as runs finish)"
    print(f"estimated time for the {len(todo)} runs: {left}{source}")
    return 0


def record(path):
    sweep = Plan.load(path)
    envs = list(dict.fromkeys(config.env for config in sweep.grid))
    print(f"recording the machine and the env step times in {sweep.out}", flush=True)
    records.record_machine(sweep.out, envs, sweep.options.command_line)
    return 0


def progress(path, number, seconds):
    """Run NUMBER's progress line; under --max-minutes, if it would end too late, why this invocation ends here."""
    sweep = Plan.load(path)
    sweep.observe_durations()
    todo, number, elapsed = sweep.todo(), int(number), int(seconds)
    run = todo[number - 1]
    if sweep.fits(run, elapsed):
        print(sweep.progress(number, todo), end="")
        return 0
    limit, run_s = sweep.options.max_minutes, sweep.estimator.total_ms([run.config]) // 1000
    longer = f"; it alone is estimated longer than {limit} min: raise --max-minutes to run it" if run_s > limit * 60 else ""
    print(f"--max-minutes {limit}: {estimate.duration_text(elapsed)} gone, run {number}/{len(todo)} ({run.name}) would "
          f"end after {limit} min by its estimate ({estimate.duration_text(run_s)}){longer}; {len(todo) - number + 1} "
          "runs not started: rerun the same command to go on")
    return 1


def ended(path, number, status, ms):
    """Whether run NUMBER finished; its record lines for benchmark.sh."""
    sweep = Plan.load(path)
    run, status, ms = sweep.todo()[int(number) - 1], int(status), int(ms)
    c, took = run.config, estimate.duration_text(int(ms) // 1000)
    run_dir = sweep.path("runs", c.exp, run.name)
    folders = [os.path.join(run_dir, f"agent__seed{seed}") for seed in run.seeds] if c.exp == "exp6" else [run_dir]
    unfinished = next((folder for folder in folders if not records.run_finished(folder)), None)
    if status == 0 and unfinished is None:
        if c.exp == "exp6":
            write_group_json(sweep, run, ms)
        print(f"finished\nok, {took}")
        return 0
    log, reason = f"logs/{c.exp}/{run.name}.log", str(status)
    if c.processes and status:  # the group runner's last line names the log of the process that failed
        with open(sweep.path(log)) as f:
            log = f.read().strip().splitlines()[-1]
    if sweep.options.timeout and ms // 1000 >= sweep.options.timeout and status in (124, 137):
        reason = "timeout"
    elif status == 0:
        reason = "incomplete"
        if c.processes:
            log = f"logs/exp6/{run.name}/{os.path.basename(unfinished)}.log"
        with open(sweep.path(log), "a") as f:
            f.write(f"benchmark.sh: exit status 0 but no time/total scalar in {unfinished}\n")
    print(f"failed {reason} {log}\nFAILED ({reason}) after {took}, log: {sweep.path(log)}")
    return 0


def write_group_json(sweep, run, ms):
    """The exp6 group's group.json: the report's record of it."""
    c = run.config
    processes, parallel = (c.agents, sweep.parallel) if c.processes else (1, 1)
    threads = groups.threads(c.agents, sweep.parallel) if c.processes else None
    data = {"script": c.script, "mode": c.mode, "env_id": c.env, "agents": c.agents, "processes": processes,
            "parallel": parallel, "threads": threads, "wall_seconds": ms / 1000, "cores": sweep.cpu_count}
    with open(sweep.path("runs", "exp6", run.name, "group.json"), "w") as f:
        f.write(json.dumps(data) + "\n")


def group(path, name):
    """Runs an exp6 group's processes; prints the log of the first to fail last (relative to OUT)."""
    sweep = Plan.load(path)
    run = next(run for run in sweep.todo() if run.name == name)
    run_dir, logs = sweep.path("runs", "exp6", name), sweep.path("logs", "exp6", name)
    for folder in (run_dir, logs):
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
    commands = [command(run, sweep.workload, sweep.python, sweep.out, seed) for seed in run.seeds]
    agent_logs = [os.path.join(logs, f"agent__seed{seed}.log") for seed in run.seeds]
    status, log = groups.run_group(commands, agent_logs, at_a_time(run.config, sweep.parallel), sweep.options.timeout,
                                   groups.threads(run.config.agents, sweep.parallel))
    if status:
        print(f"{os.path.basename(log).removesuffix('.log')} failed (exit status {status}); stopped the others")
        print(os.path.relpath(log, sweep.out))
    return status


def done(path, seconds, ran, *failed):
    sweep = Plan.load(path)
    if sweep.todo_names:
        refused = f", {len(sweep.refused)} refused" if sweep.refused else ""
        left = len(sweep.todo_names) - int(ran)
        stopped = f", {left} not started (--max-minutes {sweep.options.max_minutes})" if left else ""
        print(f"done in {estimate.duration_text(int(seconds))}: {int(ran) - len(failed)} runs finished, "
              f"{len(failed)} failed{refused}{stopped}")
        if failed:
            print(f"failed runs (also listed in {sweep.path('failed.txt')}):")
            print("".join(f"  {line}\n" for line in failed), end="")
    if sweep.refused:
        print("refused runs, not run (the estimated peak memory exceeds what is available):")
        print("".join(f"  {name}: {why}\n" for name, why in sweep.refused.items()), end="")
    return 1 if failed or sweep.refused else 0


COMMANDS = {"plan": plan, "start": start, "record": record, "progress": progress, "ended": ended, "group": group,
            "done": done}


def main(argv):
    if not argv or argv[0] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[0]](*argv[1:])
    except (cli_options.Refused, slurm.Refused) as refused:
        print(f"benchmark.sh: {refused}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
