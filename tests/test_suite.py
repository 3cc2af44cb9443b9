"""The suite's own machinery: the ledger of what each process and test costs, the background queue (its order, runs
taken out of it by a test that needs them first, done by a test that waits), the learning tier and the equivalence tests
it stands on."""
import ast
import functools
import os
import subprocess
import sys
import threading
from types import SimpleNamespace

import pytest

import conftest
import ledger
from helpers import DQN_SCRIPTS, LEARNS_AS, PROBED_SCRIPTS, ROOT, SCRIPTS, SharedRuns, runtime, runtime_scripts


def test_the_ledger_records_each_process_under_the_test_that_started_it(request):
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    (row,) = [row for row in ledger.LEDGER.processes if row["test"] == request.node.nodeid]
    assert row["key"].endswith("-c pass") and row["seconds"] > 0 and row["start"] >= 0


def test_a_run_asked_for_before_the_background_reaches_it_runs_at_once_in_the_asking_thread(tmp_path):
    runs, release, threads = SharedRuns(tmp_path), threading.Event(), {}

    def blocking(folder):
        release.wait(timeout=60)
        return "first"

    def second(folder):
        threads["second"] = threading.current_thread()
        return "second"

    runs.future(("first",), blocking, background=True)
    runs.future(("second",), second, background=True)  # queued behind the first, which waits
    try:
        assert runs.job(("second",), second) == "second"  # not waiting for the first to end
        assert threads["second"] is threading.current_thread()
    finally:
        release.set()
        runs.close()
    assert runs.job(("first",), blocking) == "first"


def test_the_background_runs_the_queued_run_first_in_rank_whenever_it_was_queued(tmp_path):
    runs, started, release, order = SharedRuns(tmp_path), threading.Event(), threading.Event(), []

    def work(name, folder):
        started.set()
        release.wait(timeout=60)
        order.append(name)

    for name, rank in (("running", 0), ("last", 9), ("first", 1), ("second", 1)):
        runs.rank = rank
        runs.future((name,), functools.partial(work, name), background=True)
        started.wait(timeout=60)  # the first is running before the others are queued
    release.set()
    runs.runs["last",].result(timeout=60)  # waited for, not asked for (which would run it here, at once)
    assert order == ["running", "first", "second", "last"]
    runs.close()


def test_a_test_waiting_for_a_running_run_does_the_queued_runs_meanwhile(tmp_path):
    runs, started, release, threads = SharedRuns(tmp_path), threading.Event(), threading.Event(), {}

    def running(folder):
        started.set()
        release.wait(timeout=60)
        return "running"

    def queued(folder):
        threads["queued"] = threading.current_thread()
        release.set()
        return "queued"

    runs.future(("running",), running, background=True)
    started.wait(timeout=60)
    runs.future(("queued",), queued, background=True)
    try:
        assert runs.job(("running",), running) == "running"
        assert threads["queued"] is threading.current_thread()
    finally:
        release.set()
        runs.close()


@pytest.mark.parametrize("markexpr, keyword, args, keeps", [
    ("not slow", "", ["tests"], ["unit", "equivalent"]),
    ("", "", ["tests/test_scripts.py", "tests/test_dqn.py"], ["unit", "slow"]),
    ("learning", "", ["tests"], None),
    ("", "smoke", ["tests"], None),
    ("", "", ["tests/test_scripts.py::test_learns[ppo_nnx.py]"], None),
])
def test_runs_are_queued_as_their_tests_are_collected_only_where_the_markers_alone_select(
        markexpr, keyword, args, keeps):
    items = [item("unit"), item("slow", "slow"), item("equivalent", "learns_by_equivalence")]
    option = SimpleNamespace(markexpr=markexpr, keyword=keyword, collectonly=False, deselect=[], lf=False,
                             stepwise=False)
    selected = conftest.selected_while_collected(SimpleNamespace(option=option, args=args))
    assert (selected and [i.name for i in items if selected(i)]) == keeps


def test_every_learning_run_left_to_the_tier_names_an_equivalence_test_that_exists_and_a_representative_in_ci():
    every = PROBED_SCRIPTS
    for script, (representative, test) in LEARNS_AS.items():
        assert script in every and representative in every, script
        while representative in LEARNS_AS:  # a chain ends at a script whose learning run the README's command runs
            representative = LEARNS_AS[representative][0]
        file, name = test.split("::")
        tree = ast.parse(open(os.path.join(ROOT, "tests", file)).read())
        assert name in {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}, test


def item(name, *markers, fixtures=()):
    marks = {marker: SimpleNamespace(args=()) for marker in markers}
    return SimpleNamespace(name=name, get_closest_marker=marks.get, fixturenames=list(fixtures))


@pytest.mark.parametrize("markexpr, args, kept", [
    ("", ["tests"], ["unit", "shared", "representative"]),
    ("learning", ["tests"], ["unit", "shared", "representative", "equivalent"]),
    ("", ["tests/test_scripts.py::test_learns[ppo_nnx.py]"], ["unit", "shared", "representative", "equivalent"]),
])
def test_the_learning_runs_an_equivalence_proves_are_left_out_unless_a_marker_or_a_node_id_selects_them(
        markexpr, args, kept):
    items = [item("equivalent", "learning", "learns_by_equivalence", fixtures=["shared_runs"]),
             item("representative", "learning", fixtures=["shared_runs"]), item("shared", fixtures=["shared_runs"]),
             item("unit")]
    deselected = []
    config = SimpleNamespace(option=SimpleNamespace(markexpr=markexpr), args=args,
                             hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items)))
    conftest.pytest_collection_modifyitems(config, items)
    assert sorted(i.name for i in items) == sorted(kept)
    assert [i.name for i in items][0] == "unit"  # the tests that read no shared run first
    assert [i.name for i in deselected] == (["equivalent"] if "equivalent" not in kept else [])


def test_signals_and_divergence_run_once_per_runtime_and_every_runtime_once():
    scripts = runtime_scripts(SCRIPTS + DQN_SCRIPTS)
    assert len({runtime(script) for script in scripts}) == len(scripts)
    assert {runtime(script) for script in scripts} == {runtime(script) for script in SCRIPTS + DQN_SCRIPTS}
