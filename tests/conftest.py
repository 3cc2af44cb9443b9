"""Fixtures shared by every test file, the suite's ledger and its time budget.

Budget, on 2 idle cores: `python -m pytest` (the full suite, CI's command) at most 20 minutes on an AMD EPYC (about 12
on an Intel Xeon); `python -m pytest -m "not slow"` at most 3 minutes there (Xeon: under 2), and it still runs every
script once. Measured, whole processes, alone (docs/running.md has every sitting): on the Zen 4 EPYC (family 25,
model 17), 2026-11-30, the fast subset 2:55 at 7032022, median of 3 (2:54-3:01); 2:59 (2:55-3:01) at 46d15f6,
against 3:48 (3:44-3:49) before its charts were drawn only where a test reads them and its cheap XLA compile turned
the fusion emitters off, in turn from clean clones (0.78x pair by pair, 0.78-0.79; 1-minute load 0.46 at the start;
0.45 at 7032022's); the full suite 17:41 through .ci/run at 0fce6d7 (one run, load 1.17 at its start; pytest's count;
19:04 with the install), 17:37 at 39a2c37, 19:43 before. On the Zen 5 EPYC (family 26, model 2),
2026-11-29, before the Atari family: the fast subset 2:47, median of 3 (2:44-2:57), the full suite 13:07 (one run).
Both cores stay busy to the end (the ledger): only less work shortens the suite. On the Zen 4 the fast subset is at
its 3 minutes, not under them: one run in three took 3:01.
Numbers computed two ways (frameworks' parity, a batched against an unbatched program, a replay) are compared by one
rule, tests/tolerance.py's: RTOL of the value, and a value that is a mean or sum of terms of both signs (a policy loss,
a KL estimate, a gradient) also RTOL of its terms' magnitude, since near 0 its rounding is the terms', which another
CPU generation rounds otherwise; never an absolute floor of a test's own.
`python -m pytest -m learning` (the learning tier: one learning run per script, about 4 minutes) is not in the README's
command: run it before a reference sitting (the sitting tools say so when they start; docs/running.md).

What costs what (tests/ledger.py prints the 15 costliest processes and tests at the end of every run, and
`python tools/ledger.py` reads the last run's ledger back): a fresh JAX process starts in ~3.5 s (imports, gymnax's
among them, ~2 s); a TINY run of a JAX script ~5 s; a cold torch.compile run ~15-20 s; an eager run ~7-10 s; a learning
run 8-27 s. A new script adds its smoke run to the fast subset (~5 s, ~2.5 s of wall time on 2 cores; torch.compile
~20 s) and its per-script runs to the full suite (smoke, profiled, other seed, unknown env, its eager mode if it has
one: ~20-30 s of a core). It adds a learning run to the README's command only where it starts an equivalence class of
its own: otherwise it names, in helpers.LEARNS_AS, the parity or "trains alike" test that proves it learns as its
class's representative, and its learning run joins the learning tier. It adds signal and divergence runs only where it
is a runtime of its own (helpers.runtime). A new family is a new class and a new runtime: a learning run of 8-27 s and
two runs of ~5 s.

Rules that keep the suite inside the budget:
- Share fresh-process runs: ask the session-wide `shared_runs` fixture (tests/helpers.py, SharedRuns)
  for a run; the same script, arguments, environment and probe run once, whichever test asks first,
  and every assertion about that run reads the same logs. Put several assertions on one run rather
  than one run per assertion (a learning run also checks the tags; a probed run also its logs).
  A job of several processes that one test reads (the README's commands, the committed reports remade, the real tune
  studies) is shared the same way (SharedRuns.job), so that it too runs in the background.
- Use the TINY config (`shared_runs.tiny`) unless the test is about learning or the default config.
- Run a mode only where that mode is what is tested: eager runs for eager behaviour (one probed run
  per eager script counts compilations per iteration), env families (bsuite, MinAtar) once per
  gymnax framework family (their env code is the same line for line, which a test checks), sync
  timing on its own run (which also profiles, so --profile costs no run of its own); a signal or a
  diverged loss once per runtime (the harness is the same line for line in every script of a family).
- Mark `@pytest.mark.slow` every learning run, eager run, cold torch.compile (in a script beyond
  its one fast smoke run, or in the test process), real sweep and report of a synthetic sweep beyond the first of its
  section, parity over whole iterations (rollout and update, two iterations, "trains alike"), an env's case beyond the
  first where the cases differ only by env, a JAX framework's parity on a second network of the same layers (Atari's
  Nature CNN after MinAtar's CNN), and a tool's error line in a fresh process of its own; the fast subset
  keeps one probed TINY run per script, the unit tests, each framework's parity on one minibatch (loss terms and every
  gradient), the CLI probe (every script's bad input in one process) and the dry runs (in this process, through the
  planner's own `plan` command; the golden dry runs and the README's through bash).
- Never add a run that proves what another run already proves; prefer a stand-in (tests/dqn_standin.py, the SLURM
  tests' and the command sets' stand-in scripts) where the scripts are not what is under test. tune.py's end-to-end
  studies on real scripts are two (trials in processes, and a population); a fake repository's sweep times no env (the
  one real sweep does).
- Draw a chart only where a test reads it (drawing is most of a synthetic report's time): the reports written in
  this process save an empty file in each chart's place (charts_undrawn); a test that reads a chart asks for
  drawn_charts (capture_figures does), a wider fixture draws within helpers.charts_drawn. The reports written in
  processes draw every chart: the synthetic reference sweep's plot.py run in the fast subset, every committed report
  remade in the full suite, both failing on a chart problem.
- Short processes compile cheaply: every script's shared runs but the learning runs, the tools' end-to-end runs and
  this process's own JAX take XLA's cheapest CPU settings (helpers.FAST_COMPILE: the same computation, compiled sooner,
  rounded apart in the last bits); the learning runs, which execute more than they compile, keep XLA's defaults.
  Every shared run's torch uses one intra-op thread (two processes share the two cores).
- Every JAX process of the session shares one persistent compilation cache, and every torch.compile
  one Inductor cache, both empty when the session starts: the same function or primitive compiled twice (eager runs
  compile each primitive; runs that differ only by seed or sync timing compile the same functions) is compiled once.
  JAX logs "Compiling ..." when it lowers a function, before the cache lookup, and torch counts its graphs before
  Inductor's, so compilation counts still count every compilation a script asks for.
- Both cores stay busy until the end: the shared runs that the selected tests mark `background(kind)` (a SharedRuns
  method's name, or a function of the test module that takes the SharedRuns) run in a background thread, one at a
  time, the first in BACKGROUND's order first, the costliest (the learning runs, the jobs of many processes). They are
  queued as their tests are collected where the markers alone select (the whole suite, `-m "not slow"`), so that the
  background starts while this process still collects, else once collection ends. A test that asks for a run the
  background has not started runs it itself, on the other core; one that waits for a run the background is running
  does the queued runs meanwhile. The tests that read no shared run go first, those that read one after them, the
  learning tests last.
"""
import functools
import inspect
import json
import os
import shutil
import tempfile
import time

import pytest

import ledger
from helpers import DRAWING, FAST_COMPILE, UNDRAWN, SharedRuns, draw_charts

SHARED = {}
# the kinds of background runs, in the order they start: a SharedRuns method's name, or the name of a function of a
# test module that takes the SharedRuns first (a test marked background(function) passes the function itself). The
# costliest first: the learning runs, then the fixed jobs of many processes and the runs of several iterations, then
# the cheap single runs, so that at the end, when a test asks for a run the background has not started, it runs that
# one itself (SharedRuns.future) on this process's core while the background keeps the other busy
BACKGROUND = [
    "learning", "dqn_learning", "continuous_learning", "cnn_learning", "readme_commands_job", "regenerated_reports", "real_studies",
    "brax_hopper_run", "compiled_torch_run", "native_compile_run", "family_env_run", "eager", "dqn_eager_run",
    "scan_runs", "reference_sweep_job",
    "interrupted", "profiled", "other_seed", "doors_run", "mujoco_hopper_run", "dqn_explore", "diverged", "cli", "smoke",
    "dqn_smoke", "continuous_smoke", "atari_smoke", "unknown_env",
]
LEARNING = {"learning", "dqn_learning", "continuous_learning", "cnn_learning"}


def shared():
    if "runs" not in SHARED:
        SHARED["runs"] = SharedRuns(tempfile.mkdtemp(prefix="benchback-shared-runs-"))
    return SHARED["runs"]


def background_kind(item):
    """The kind of shared run a test marked `background` reads (BACKGROUND's name of it), else None."""
    marker = item.get_closest_marker("background")
    if not marker:
        return None
    kind = marker.args[0]
    return kind if isinstance(kind, str) else kind.__name__


def background_start(item):
    """What starts the test's shared run in the background: the SharedRuns method, or the test module's function with
    the SharedRuns as its first argument."""
    kind = item.get_closest_marker("background").args[0]
    return getattr(shared(), kind) if isinstance(kind, str) else functools.partial(kind, shared())


def pytest_configure(config):
    """The ledger (tests/ledger.py) records every process started from here on. The session's JAX and torch.compile
    (Inductor) caches, for every process started from here on (set before jax and torch are imported): the same function
    compiled twice in a session is compiled once (the torch.compile scripts disable Inductor's caches, which
    TORCHINDUCTOR_FORCE_DISABLE_CACHES=0 overrides; torch's compile counters, which the tests read, count every graph
    all the same). Inductor takes the CPU's vector ISA from /proc/cpuinfo instead of building and loading a probe
library per ISA (TORCHINDUCTOR_VEC_ISA_OK=1: the same ISA where the compiler builds it, ~8 s less per cold process
here). No JAX preallocation on a GPU: this process's JAX would otherwise hold most of the GPU the scripts it
    starts use."""
    os.environ.update(
        XLA_PYTHON_CLIENT_PREALLOCATE="false",
        JAX_COMPILATION_CACHE_DIR=os.path.join(shared().root, "jax-cache"),
        JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
        JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1",
        TORCHINDUCTOR_FORCE_DISABLE_CACHES="0",
        TORCHINDUCTOR_CACHE_DIR=os.path.join(shared().root, "inductor-cache"),
        TORCHINDUCTOR_VEC_ISA_OK="1",
    )
    ledger.install()
    compile_cheaply_here()
    SHARED["selected_while_collected"] = selected_while_collected(config)


def compile_cheaply_here():
    """This process's JAX compiles with XLA's cheapest CPU settings (helpers.FAST_COMPILE): its tests compare numbers
    that it computes alike, or against NumPy within a tolerance, and spend most of their time compiling. XLA reads
    XLA_FLAGS once, when its backend starts: the flags are set for that moment only, and the processes started from
    here keep the environment's own."""
    saved = os.environ.get("XLA_FLAGS")
    os.environ["XLA_FLAGS"] = f"{saved or ''} {FAST_COMPILE}".strip()
    try:
        import jax

        jax.devices()
    finally:
        if saved is None:
            del os.environ["XLA_FLAGS"]
        else:
            os.environ["XLA_FLAGS"] = saved


def pytest_collection_modifyitems(config, items):
    """The learning runs that an equivalence test already proves (`learns_by_equivalence`) left out, unless the run
    selects by marker (-m learning runs them all) or names tests by node id. Then the tests that read no shared run
    first, while the background runs start; then those that read one; the learning tests last, so that their background
    runs overlap with every other test."""
    if not config.option.markexpr and not any("::" in arg for arg in config.args):
        proven = [item for item in items if item.get_closest_marker("learns_by_equivalence")]
        config.hook.pytest_deselected(items=proven)
        items[:] = [item for item in items if not item.get_closest_marker("learns_by_equivalence")]
    items.sort(key=lambda item: (background_kind(item) in LEARNING, "shared_runs" in item.fixturenames))


def queue_in_background(item):
    """Queue the shared run the test marked `background` reads, ranked by BACKGROUND's order."""
    start = background_start(item)
    params = item.callspec.params if hasattr(item, "callspec") else {}
    shared().rank = BACKGROUND.index(background_kind(item))
    start(**{name: params[name] for name in inspect.signature(start).parameters if name in params}, background=True)


def selected_while_collected(config):
    """How to tell, as a test is collected, whether the run keeps it, where the command line says so by markers alone
    (the whole suite or `-m "not slow"`, on folders or files); else None: known once collection ends."""
    option = config.option
    narrowed = (option.collectonly, option.keyword, option.deselect, getattr(option, "lf", False),
                getattr(option, "stepwise", False), any("::" in arg for arg in config.args))
    if any(narrowed) or option.markexpr not in ("", "not slow"):
        return None
    if option.markexpr:
        return lambda item: not item.get_closest_marker("slow")
    return lambda item: not item.get_closest_marker("learns_by_equivalence")


def pytest_itemcollected(item):
    """A selected test's background run is queued as soon as the test is collected: the background thread starts on
    the other core while this one collects the remaining test files (about 10 s)."""
    selected = SHARED["selected_while_collected"]
    if selected and background_kind(item) and selected(item):
        queue_in_background(item)


def pytest_collection_finish(session):
    """Queue the shared runs that the selected tests marked `background` read and that were not queued as they were
    collected, in BACKGROUND's order (a run asked for twice is queued once)."""
    if session.config.option.collectonly:
        return
    for item in session.items:
        if background_kind(item):
            queue_in_background(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    """The test's setup, call and teardown seconds, and the processes it starts, in the ledger."""
    ledger.LEDGER.current.test, start = item.nodeid, time.monotonic()
    yield
    ledger.LEDGER.record_test(item.nodeid, time.monotonic() - start)
    ledger.LEDGER.current.test = None


def pytest_terminal_summary(terminalreporter, config):
    """The ledger's costliest processes and tests, also stored in pytest's cache (key ledger.CACHE_KEY) and, where
    BENCHBACK_LEDGER names a file, written there as JSON."""
    summary = ledger.LEDGER.summary()
    terminalreporter.section("ledger")
    ledger.report(terminalreporter.write_line, summary)
    if getattr(config, "cache", None) is not None:  # none under -p no:cacheprovider
        config.cache.set(ledger.CACHE_KEY, summary)
    if os.environ.get("BENCHBACK_LEDGER"):
        with open(os.environ["BENCHBACK_LEDGER"], "w") as file:
            json.dump(summary, file, indent=1)


def pytest_sessionfinish(session):
    if "runs" in SHARED:
        runs = SHARED.pop("runs")
        runs.close()
        shutil.rmtree(runs.root, ignore_errors=True)


@pytest.fixture(scope="session")
def shared_runs():
    return shared()


@pytest.fixture(scope="session", autouse=True)
def charts_undrawn():
    """The reports written in this process save each chart as an empty file, its figure made but neither laid out,
    rasterised nor checked by chart_problems (helpers.UNDRAWN): drawing is most of a synthetic report's time and most
    tests read its text. A test that reads a chart asks for drawn_charts (a wider fixture: helpers.charts_drawn); the
    reports written in processes (plot.py run as a user runs it, the committed reports remade) draw every chart."""
    with pytest.MonkeyPatch.context() as patch:
        draw_charts(patch, UNDRAWN)
        yield


@pytest.fixture
def drawn_charts(monkeypatch):
    """The test's charts drawn and checked for real (through its monkeypatch: undone after any patch it makes)."""
    draw_charts(monkeypatch, DRAWING)
