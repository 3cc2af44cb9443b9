"""The planner's commands. benchmark.sh (which holds the loop, the lock and OUT/records.txt) calls them once before
its loop and once after, never between runs; a group of processes is run by `group`, the run's own command:

    python -m sweep plan PLAN CWD COMMAND -- ARGS   parse benchmark.sh's ARGS: --help, --dry-run and --slurm are
                                                    answered here, and --only of a command set hands the invocation
                                                    over to it (sweep/handover.py); otherwise the checks before a
                                                    sweep, and the plan
                                                    written into the folder PLAN (plan.json; sweep: OUT and
                                                    --max-minutes for the loop)
    python -m sweep start PLAN                      (OUT locked) check the workload, judge the records an interrupted
                                                    invocation left, say what is left to run and how long it should
                                                    take; what the loop needs of each run to do in PLAN (todo: a line
                                                    per run; N.argv: run N's command)
    python -m sweep record PLAN                     OUT/system.json and OUT/env_timing.json
    python -m sweep group PLAN NAME                 run the group NAME's processes (the command of a group of
                                                    processes); its group.json once every agent finished
    python -m sweep done PLAN SECONDS RAN           judge the records of the RAN runs started (fewer than planned where
                                                    --max-minutes stopped the loop), the sweep's summary; exit 1 if a
                                                    run failed or was refused

Each error is one line on stderr (benchmark.sh: ...) and exit status 2.
"""
import os
import shutil
import sys
import time

from sweep import estimate, groups, handover, machine, options as cli_options, records, slurm
from sweep.experiments import BY_NAME, CONTINUOUS_OBS_SIZES
from sweep.runs import at_a_time, command
from sweep.plan import Plan


def plan(path, cwd, command_line, *argv):
    argv = argv[1:] if argv[:1] == ("--",) else argv
    try:
        options = cli_options.parse(argv, command_line, cwd)
    except cli_options.HelpAsked:
        print(cli_options.help_text(), end="")
        return 0
    experiment = BY_NAME.get(options.only)
    if experiment and handover.handed_over(options, experiment):
        return handover.hand_over(options, experiment)
    slurm.check_options(options)
    uses_cores = options.grid in ("default", "gpu")  # groups of agents run processes side by side
    cores = machine.cpus_usable() if uses_cores else 1
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
    sweep.ledger.check_workload()
    sweep.ledger.judge_records()  # those left unjudged by an invocation stopped before its end (Ctrl-C, SIGTERM)
    todo = sweep.todo()
    refused = f"{len(sweep.refused)} refused (memory, listed at the end); " if sweep.refused else ""
    print(f"{len(sweep.selected)} runs selected, {len(sweep.selected) - len(todo)} already finished, {len(todo)} to "
          f"run; {refused}output in {sweep.out}")
    sweep.todo_names = [run.name for run in todo]
    sweep.save(path)
    sweep.observe_durations()
    sweep.write_todo(todo)
    if not todo:
        return 0
    left = sweep.estimator.left(run.config for run in todo)
    source = f", from the runs already timed in {sweep.out}" if sweep.estimator.observed_prior_ms else \
        f" (rough: built-in figures for {sweep.machine_kind}; refined as runs finish)"
    print(f"estimated time for the {len(todo)} runs: {left}{source}")
    print(machine.LEARNING_CHECK)
    return 0


def record(path):
    sweep = Plan.load(path)
    # the env complexity axis is that of the discrete-action envs: a continuous-action env's share is measured apart
    envs = list(dict.fromkeys(config.env for config in sweep.grid if config.env not in CONTINUOUS_OBS_SIZES))
    print(f"recording the machine and the env step times in {sweep.out}", flush=True)
    records.record_machine(sweep.out, envs, sweep.options.command_line)
    return 0


def group(path, name):
    """Runs a group's processes; prints the log of the first to fail last (relative to OUT). Once every agent has
    finished, the group's group.json, with the wall time of its processes."""
    sweep = Plan.load(path)
    run = next(run for run in sweep.selected if run.name == name)
    c = run.config
    run_dir, logs = sweep.ledger.path("runs", c.exp, name), sweep.ledger.path("logs", c.exp, name)
    for folder in (run_dir, logs):
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
    commands = [command(run, sweep.workload, sweep.python, sweep.out, seed) for seed in run.seeds]
    agent_logs = [os.path.join(logs, f"agent__seed{seed}.log") for seed in run.seeds]
    started = time.monotonic()
    status, log = groups.run_group(commands, agent_logs, at_a_time(c, sweep.parallel), sweep.options.timeout,
                                   groups.threads(c.agents, sweep.parallel))
    if status:
        print(f"{os.path.basename(log).removesuffix('.log')} failed (exit status {status}); stopped the others")
        print(os.path.relpath(log, sweep.out))
    elif all(records.run_finished(os.path.join(run_dir, f"agent__seed{seed}")) for seed in run.seeds):
        sweep.ledger.write_group_json(run, round((time.monotonic() - started) * 1000))
    return status


def done(path, seconds, ran):
    sweep = Plan.load(path)
    ran, lines = int(ran), sweep.ledger.judge_records()
    failed = [fields for fields in lines[len(lines) - ran:] if fields[1] != "finished"]  # one record per run started
    if sweep.todo_names:
        refused = f", {len(sweep.refused)} refused" if sweep.refused else ""
        left = len(sweep.todo_names) - ran
        stopped = f", {left} not started (--max-minutes {sweep.options.max_minutes})" if left else ""
        print(f"done in {estimate.duration_text(int(seconds))}: {ran - len(failed)} runs finished, "
              f"{len(failed)} failed{refused}{stopped}")
        if failed:
            print(f"failed runs (also in {sweep.ledger.path('records.txt')}):")
            for name, verdict, status, _, _, log in failed:
                print(f"  {name} {status if verdict == 'failed' else verdict} {sweep.ledger.path(log)}")
    if sweep.refused:
        print("refused runs, not run (the estimated peak memory exceeds what is available):")
        print("".join(f"  {name}: {why}\n" for name, why in sweep.refused.items()), end="")
    return 1 if failed or sweep.refused else 0


COMMANDS = {"plan": plan, "start": start, "record": record, "group": group, "done": done}


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
