"""The repository as a user gets it: requirements.txt pins every package the code imports, and plot.py's own help
names every experiment it reads."""
import ast
import importlib.metadata
import re
import sys
from pathlib import Path

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
