"""The suite's ledger: what every test and every fresh process it starts costs, printed at the end of the run.

`pytest --durations` sees only the tests' own time: a shared run started in the background (tests/helpers.py,
SharedRuns) costs a core for as long as it runs and no test's duration shows it. The ledger records:
- every process any test starts (subprocess.Popen, which subprocess.run uses): its key (a shared run's key, else its
  command line shortened), the test that started it (or "background"), when it started (seconds into the session) and
  its wall seconds from start to exit;
- every test's wall seconds (setup, call and teardown), and how long it waited on a background run.
At the end it prints the 15 costliest processes and tests and the totals, and stores the whole ledger in pytest's
cache (`.pytest_cache`, key benchback/ledger) for a before/after comparison (tools/ledger.py reads it).
"""
import os
import shlex
import subprocess
import threading
import time

TOP = 15
CACHE_KEY = "benchback/ledger"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Ledger:
    def __init__(self):
        self.processes, self.tests, self.lock = [], {}, threading.Lock()
        self.current = threading.local()  # the test this thread runs, and the key a shared run gives its process
        self.started = time.monotonic()

    def label(self, args) -> str:
        """A process's key: the shared run's key its thread set, else its command line with the repository and
        temporary folders left out."""
        key = getattr(self.current, "key", None)
        if key:
            return key
        words = [args] if isinstance(args, (str, bytes)) else [str(arg) for arg in args]
        words = [word.replace(ROOT + os.sep, "") for word in words]
        words = [os.path.basename(word) if os.sep in word else word for word in words]
        text = " ".join(shlex.quote(word) for word in words)
        return text if len(text) <= 110 else text[:107] + "..."

    def record_process(self, label: str, test: str, start: float, seconds: float):
        with self.lock:
            self.processes.append({"key": label, "test": test, "start": round(start - self.started, 2),
                                   "seconds": round(seconds, 2)})

    def record_test(self, nodeid: str, seconds: float):
        with self.lock:
            self.tests[nodeid] = round(self.tests.get(nodeid, 0) + seconds, 2)

    def summary(self) -> dict:
        wall = time.monotonic() - self.started
        return {"wall_seconds": round(wall, 1), "processes": self.processes, "tests": self.tests}


LEDGER = Ledger()


class LedgeredPopen(subprocess.Popen):
    """subprocess.Popen that records its wall seconds in the ledger once the process has been seen to exit."""

    def __init__(self, args, *rest, **kwargs):
        self._ledger_start = time.monotonic()
        self._ledger_label = LEDGER.label(args)
        self._ledger_test = getattr(LEDGER.current, "test", None) or "background"
        self._ledger_done = False
        super().__init__(args, *rest, **kwargs)

    def _ledger_close(self):
        if self.returncode is not None and not self._ledger_done:
            self._ledger_done = True
            LEDGER.record_process(self._ledger_label, self._ledger_test, self._ledger_start,
                                  time.monotonic() - self._ledger_start)

    def wait(self, timeout=None):
        try:
            return super().wait(timeout)
        finally:
            self._ledger_close()

    def poll(self):
        result = super().poll()
        self._ledger_close()
        return result


def install():
    """Record every process started from this process from now on."""
    subprocess.Popen = LedgeredPopen


def keyed(key: str, work):
    """`work` run with the processes it starts recorded under `key` (a shared run's key)."""
    def run(*args, **kwargs):
        LEDGER.current.key = key
        try:
            return work(*args, **kwargs)
        finally:
            LEDGER.current.key = None
    return run


def report(write, summary: dict, top: int = TOP):
    """Write the ledger's tables: the costliest processes and tests, and the totals."""
    processes = sorted(summary["processes"], key=lambda row: -row["seconds"])
    tests = sorted(summary["tests"].items(), key=lambda item: -item[1])
    background = sum(row["seconds"] for row in processes if row["test"] == "background")
    write(f"ledger: {len(processes)} processes, {sum(row['seconds'] for row in processes):.0f} s of process time "
          f"({background:.0f} s in the background), {len(tests)} tests, {summary['wall_seconds']:.0f} s of wall time")
    write(f"the {min(top, len(processes))} costliest processes (seconds, started by, key):")
    for row in processes[:top]:
        write(f"  {row['seconds']:7.1f}  {row['test'][:60]:60}  {row['key']}")
    write(f"the {min(top, len(tests))} costliest tests (seconds of setup, call and teardown):")
    for nodeid, seconds in tests[:top]:
        write(f"  {seconds:7.1f}  {nodeid}")
