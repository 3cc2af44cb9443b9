"""A group of agents run as one process per agent: its N processes, as many at a time as this machine has usable
cores, each with its share of the cores and its own log; the first to fail stops the others and no more start."""
import os
import signal
import subprocess
import sys
import time

KILL_GRACE_SECONDS = 10  # after a timeout or a stop, SIGKILL a process still alive this long after SIGTERM


def threads(agents: int, parallel: int) -> int | None:
    """OMP_NUM_THREADS (torch's intra-op threads) of each process when several run at a time: the usable cores shared
    among them; None for a process that runs alone, which keeps the environment of every other run. Two torch
    processes side by side, each with torch's default of a thread per core, wait on each other's threads many times
    over (docs/method.md has the measurement); XLA's CPU programs of the small model run on one thread either way."""
    return parallel // min(agents, parallel) if agents > 1 and parallel > 1 else None


def run_group(commands, logs, parallel: int, timeout: int, cores_each: int | None) -> tuple:
    """Runs the commands (one per agent) `parallel` at a time, each under GNU timeout (its own process group, which
    a signal to timeout reaches whole) into its log. Returns (the exit status of the first to fail, its log), or
    (0, None). SIGTERM stops every running process and exits 128 + 15."""
    environment = {**os.environ, **({"OMP_NUM_THREADS": str(cores_each)} if cores_each else {})}
    running, waiting, failure = {}, list(zip(commands, logs)), (0, None)

    def stop(*_):
        for process in running:
            process.terminate()
        for process in running:
            process.wait()
        sys.exit(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    while waiting or running:
        while waiting and len(running) < parallel and not failure[0]:
            command, log = waiting.pop(0)
            with open(log, "w") as output:
                process = subprocess.Popen(["timeout", f"--kill-after={KILL_GRACE_SECONDS}", str(timeout), *command],
                                           stdout=output, stderr=subprocess.STDOUT, env=environment)
            running[process] = log
        ended = next((process for process in running if process.poll() is not None), None)
        if ended is None:
            time.sleep(0.05)
            continue
        log = running.pop(ended)
        if ended.returncode and not failure[0]:
            failure, waiting = (ended.returncode, log), []
            for process in running:
                process.terminate()
    return failure
