"""The repository as a user gets it: requirements.txt pins every package the code imports, plot.py's own help names
every experiment it reads, and `git log --oneline` reads (subjects of at most 72 characters)."""
import ast
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

import plot
from sweep.experiments import EXPERIMENTS
from helpers import ROOT

# the project's own modules and packages, imported by name from the repository root, tests/ and tools/ (pytest.ini's
# pythonpath)
FOLDERS = ("", "tests", "tools", "sweep", "report")
LOCAL = {path.stem for folder in FOLDERS for path in Path(ROOT, folder).glob("*.py")} | {"sweep", "report"}


def imported_top_level_names(path: Path) -> set:
    """The first component of every module `path` imports (absolute imports only)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def pinned() -> dict:
    """{normalised distribution name: version} of requirements.txt's `name==version` lines."""
    lines = Path(ROOT, "requirements.txt").read_text().splitlines()
    return {re.sub(r"[-_.]+", "-", name).lower(): version
            for name, version in (line.split("==") for line in lines if line.strip() and not line.startswith("#"))}


def test_requirements_pin_every_third_party_package_the_code_imports():
    sources = [path for folder in FOLDERS for path in Path(ROOT, folder).glob("*.py")]
    modules = set().union(*map(imported_top_level_names, sources)) - set(sys.stdlib_module_names) - LOCAL
    distributions = importlib.metadata.packages_distributions()
    requirements = pinned()
    unpinned = {module: distributions.get(module) for module in modules
                if not any(re.sub(r"[-_.]+", "-", name).lower() in requirements for name in distributions.get(module, []))}
    assert not unpinned, f"imported but not pinned in requirements.txt: {unpinned}"


def test_plot_help_names_the_last_experiment_it_reads():
    assert f"exp1|...|{EXPERIMENTS[-1]}" in plot.__doc__


# the last commit before the rule that a subject fits in 72 characters (the why goes in the body)
SUBJECT_RULE_SINCE = "d517fd6"


def test_every_commit_subject_since_the_rule_fits_in_72_characters():
    git = ["git", "-C", str(ROOT)]
    if subprocess.run([*git, "cat-file", "-e", f"{SUBJECT_RULE_SINCE}^{{commit}}"], capture_output=True).returncode:
        pytest.skip(f"this checkout's history does not reach {SUBJECT_RULE_SINCE} (a shallow clone)")
    subjects = subprocess.run([*git, "log", "--format=%s", f"{SUBJECT_RULE_SINCE}..HEAD"], capture_output=True,
                              text=True, check=True).stdout.splitlines()
    assert subjects and not [subject for subject in subjects if len(subject) > 72]
