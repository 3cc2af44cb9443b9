"""optuna-dashboard (requirements-dashboard.txt) on a finished study of tests/dqn_standin.py: started on 127.0.0.1 with
the command tune.py prints at the end, its study's trial list loaded in headless Chromium (Debian's `chromium`) lists
every trial of trials.csv with its state and marks the best (slow: a study, a server and a browser, about 6 s on 2
cores). Skipped where optuna-dashboard or chromium is absent: .ci/run installs both (chromium as root), pytest installs
nothing."""
import csv
import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from search.storage import dashboard_command

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STANDIN = os.path.join(ROOT, "tests", "dqn_standin.py")
CHROMIUM = shutil.which("chromium")
READY_SECONDS = 30  # the dashboard answers within about 2 s on 2 busy cores
BROWSER_SECONDS = 60  # a page load takes about 2 s
STATES = {"complete": "Complete", "pruned": "Pruned", "fail": "Fail"}  # trials.csv's state: the dashboard's label

needs_dashboard = pytest.mark.skipif(
    importlib.util.find_spec("optuna_dashboard") is None,
    reason="optuna-dashboard is not installed: pip install -r requirements-dashboard.txt (.ci/run installs it)")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on the PATH: apt-get install chromium, Debian's (.ci/run installs it as root)")


def test_the_dashboard_command_opens_the_journal_file_or_the_storage_url_quoted_for_the_shell():
    assert dashboard_command("studies/doors", "") == "optuna-dashboard studies/doors/journal.log"
    assert dashboard_command("my studies/a", "") == "optuna-dashboard 'my studies/a/journal.log'"
    assert dashboard_command("studies/a", "sqlite:///a.db") == "optuna-dashboard sqlite:///a.db"


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A finished study of the stand-in, as tune.py leaves it (5 trials, one failed: its learning rate is over the
    stand-in's NaN threshold), its trials.csv rows and the dashboard command tune.py printed."""
    study_dir = str(tmp_path_factory.mktemp("dashboard") / "standin")
    result = subprocess.run([sys.executable, os.path.join(ROOT, "tune.py"), "--trials", "5", "--sampler", "random",
                             "--eval-seeds", "0", "--out", study_dir, STANDIN, "--nan-above", "0.004"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    printed = [line for line in result.stdout.splitlines() if line.startswith("dashboard: ")]
    assert printed == [f"dashboard: {dashboard_command(study_dir, '')}"], result.stdout
    with open(os.path.join(study_dir, "trials.csv")) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 5 and {"complete", "fail"} <= {row["state"] for row in rows}, rows
    return study_dir, rows, printed[0].removeprefix("dashboard: ")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def dashboard(study, tmp_path_factory):
    """The command tune.py printed, on 127.0.0.1 and a free port, once it answers; its base URL. Always ended."""
    study_dir, _, command = study
    argv = shlex.split(command)
    # the optuna-dashboard of this Python's environment, where pip put it, before any other on the PATH
    local = os.path.join(os.path.dirname(sys.executable), argv[0])
    argv[0] = local if os.path.exists(local) else shutil.which(argv[0]) or argv[0]
    port = free_port()
    log_path = tmp_path_factory.mktemp("dashboard-log") / "optuna-dashboard.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen([*argv, "--host", "127.0.0.1", "--port", str(port)], stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_SECONDS
        while True:
            if server.poll() is not None:
                pytest.fail(f"optuna-dashboard exited {server.returncode}: {log_path.read_text()[-2000:]}")
            try:
                get_json(f"{url}/api/studies")
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"optuna-dashboard did not answer in {READY_SECONDS} s: {log_path.read_text()[-2000:]}")
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def rendered_text(url: str, profile: str) -> list:
    """The page as headless Chromium renders it (the dashboard is a single-page app: its DOM once the scripts and
    their requests are done), as the lines of its text, styles and scripts left out."""
    browser = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                f"--user-data-dir={profile}", "--virtual-time-budget=10000", "--dump-dom", url],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        dom, errors = browser.communicate(timeout=BROWSER_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(browser.pid, signal.SIGKILL)  # the browser and its helper processes, a session of their own
        browser.communicate()
        pytest.fail(f"chromium did not render {url} in {BROWSER_SECONDS} s")
    assert browser.returncode == 0 and dom, f"chromium exited {browser.returncode}: {errors[-2000:]}"
    dom = re.sub(r"<(style|script)\b[^>]*>.*?</\1>", "", dom, flags=re.S)
    return [line.strip() for line in re.sub(r"<[^>]+>", "\n", dom).splitlines() if line.strip()]


def listed_trials(lines: list) -> dict:
    """{number: (state, whether marked best)} of the trial list: each entry is "Trial N", its state, then "Best Trial"
    on the best."""
    trials = {}
    for index, line in enumerate(lines):
        number = re.fullmatch(r"Trial (\d+)", line)
        if number:
            trials[int(number[1])] = (lines[index + 1], lines[index + 2:index + 3] == ["Best Trial"])
    return trials


@pytest.mark.slow
@needs_dashboard
@needs_chromium
def test_the_study_page_in_a_browser_lists_every_trial_with_its_state_and_marks_the_best(study, dashboard, tmp_path):
    study_dir, rows, _ = study
    name = os.path.basename(study_dir)  # tune.py names the study after its folder
    ids = [summary["study_id"] for summary in get_json(f"{dashboard}/api/studies")["study_summaries"]
           if summary["study_name"] == name]
    assert len(ids) == 1, f"the journal holds no study {name} or several"
    lines = rendered_text(f"{dashboard}/dashboard/studies/{ids[0]}/trials", str(tmp_path / "chromium"))
    assert f"{name} (id={ids[0]})" in lines and f"{len(rows)} Trials" in lines, lines[:40]
    best = max((row for row in rows if row["value"]), key=lambda row: float(row["value"]))["number"]
    assert listed_trials(lines) == {int(row["number"]): (STATES[row["state"]], row["number"] == best) for row in rows}
    # the dashboard's own JSON, behind the page, holds the values tune.py recorded
    trials = get_json(f"{dashboard}/api/studies/{ids[0]}")["trials"]
    assert [(trial["number"], trial["state"], trial.get("values", [None])[0]) for trial in trials] == \
        [(int(row["number"]), STATES[row["state"]], float(row["value"]) if row["value"] else None) for row in rows]
