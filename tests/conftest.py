"""Fixtures shared by every test file, and the suite's time budget.

Budget, on 2 idle cores: `python -m pytest` (the full suite, CI's command) at most 15 minutes on an Intel Xeon,
25 on the slower AMD EPYC; `python -m pytest -m "not slow"` at most 3 minutes (AMD EPYC: 4), and it still runs every
script at least once.
A new variant (one more script in the registry, sweep/variants.py, which tests/helpers.py reads) may add at most
~90 s to the full suite and ~15 s to the fast subset. What a script costs, roughly: a TINY run of a JAX script
a few seconds; a cold torch.compile run ~45 s (the script disables every compile cache on purpose);
an eager (--no-jit) run ~35 s, almost all of it JAX compiling each primitive once; a learning run
(default config, LEARNING_ITERATIONS) from ~25 s (JAX) to minutes (torch, torch.compile).

Rules that keep the suite inside the budget:
- Share fresh-process runs: ask the session-wide `shared_runs` fixture (tests/helpers.py, SharedRuns)
  for a run; the same script, arguments, environment and probe run once, whichever test asks first,
  and every assertion about that run reads the same logs. Put several assertions on one run rather
  than one run per assertion (a learning run also checks the tags; a probed run also its logs).
- Use the TINY config (`shared_runs.tiny`) unless the test is about learning or the default config.
- Run a mode only where that mode is what is tested: eager runs for eager behaviour (one probed run
  per eager script counts compilations per iteration), env families (bsuite, MinAtar) once per
  gymnax framework family (their env code is the same line for line, which a test checks), sync
  timing on its own run (which also profiles, so --profile costs no run of its own).
- Mark `@pytest.mark.slow` every learning run, eager run, cold torch.compile (in a script beyond
  its one fast smoke run, or in the test process) and real sweep; the fast subset keeps one probed
  TINY run per script, the unit and eager parity tests, the CLI probe (every script's bad input in
  one process) and the dry runs.
- Never add a run that proves what another run already proves.
- tune.py's studies run tests/dqn_standin.py (the scripts' contract in a fraction of a second a trial), except one
  tiny study per algorithm and exp10's command set at its tiny size, which run the real scripts.
- Every JAX process of the session shares one persistent compilation cache, empty when the session
  starts: the same function or primitive compiled twice (eager runs compile each primitive; runs
  that differ only by seed or sync timing compile the same functions) is compiled once. JAX logs
  "Compiling ..." when it lowers a function, before the cache lookup, so compilation counts still
  count every compilation a script asks for.
- The fresh-process runs start in the background, one at a time, as soon as the tests are
  collected: a test marked `background(kind)` starts the shared run of that kind (a SharedRuns
  method, in BACKGROUND's order: PPO's and DQN's smoke runs first, the learning runs last) with
  its parameters (script, signame) there (the learning tests run last). They use one core for most
  of the session while the tests in this process use the other; the tests that read no shared run
  go first, those that read one after them, so that this process seldom waits for a run.
"""
import inspect
import os
import shutil
import tempfile

import time

import pytest

import ledger
from helpers import SharedRuns

SHARED = {}
# the kinds of background runs (SharedRuns methods), in the order they start
BACKGROUND = [
    "smoke", "dqn_smoke", "continuous_smoke", "cli", "profiled", "dqn_explore", "diverged", "interrupted",
    "unknown_env", "learning", "dqn_learning", "continuous_learning",
]
LEARNING = {"learning", "dqn_learning", "continuous_learning"}


def shared():
    if "runs" not in SHARED:
        SHARED["runs"] = SharedRuns(tempfile.mkdtemp(prefix="benchback-shared-runs-"))
    return SHARED["runs"]


def background_kind(item):
    """The kind of shared run a test marked `background` reads, else None."""
    marker = item.get_closest_marker("background")
    return marker.args[0] if marker else None


def pytest_configure(config):
    """The ledger (tests/ledger.py) records every process started from here on. The session's JAX compilation cache, for every process started from here on (set before jax is imported), and
    no JAX preallocation on a GPU: this process's JAX would otherwise hold most of the GPU the scripts it starts use."""
    os.environ.update(
        XLA_PYTHON_CLIENT_PREALLOCATE="false",
        JAX_COMPILATION_CACHE_DIR=os.path.join(shared().root, "jax-cache"),
        JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
        JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1",
    )
    ledger.install()


def pytest_collection_modifyitems(items):
    """The tests that read no shared run first, while the background runs start; then those that read one (by then
    most have finished); the learning tests last, so that their background runs overlap with every other test."""
    items.sort(key=lambda item: (background_kind(item) in LEARNING, "shared_runs" in item.fixturenames))


def pytest_collection_finish(session):
    """Start the shared runs that the selected tests marked `background` read, in the background (BACKGROUND order)."""
    if session.config.option.collectonly:
        return
    marked = [item for item in session.items if background_kind(item)]
    for item in sorted(marked, key=lambda item: BACKGROUND.index(background_kind(item))):
        start = getattr(shared(), background_kind(item))
        params = item.callspec.params if hasattr(item, "callspec") else {}
        start(**{name: params[name] for name in inspect.signature(start).parameters if name in params}, background=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    """The test's setup, call and teardown seconds, and the processes it starts, in the ledger."""
    ledger.LEDGER.current.test, start = item.nodeid, time.monotonic()
    yield
    ledger.LEDGER.record_test(item.nodeid, time.monotonic() - start)
    ledger.LEDGER.current.test = None


def pytest_terminal_summary(terminalreporter, config):
    """The ledger's costliest processes and tests, also stored in pytest's cache (key ledger.CACHE_KEY)."""
    summary = ledger.LEDGER.summary()
    terminalreporter.section("ledger")
    ledger.report(terminalreporter.write_line, summary)
    if config.cache is not None:
        config.cache.set(ledger.CACHE_KEY, summary)


def pytest_sessionfinish(session):
    if "runs" in SHARED:
        runs = SHARED.pop("runs")
        runs.close()
        shutil.rmtree(runs.root, ignore_errors=True)


@pytest.fixture(scope="session")
def shared_runs():
    return shared()
