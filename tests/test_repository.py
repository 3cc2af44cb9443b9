"""The repository as a user gets it: requirements.txt pins every package the code imports, plot.py's own help names
every experiment it reads, and `git log --oneline` reads (subjects of at most 72 characters)."""
import ast
import functools
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
FOLDERS = ("", "tests", "tools", "sweep", "report", "search")
LOCAL = {path.stem for folder in FOLDERS for path in Path(ROOT, folder).glob("*.py")} | {"sweep", "report", "search"}
# the optional extras after requirements.txt: tune.py --mlflow's, optuna-dashboard's (tests/test_dashboard.py), the site's
REQUIREMENTS = ("requirements.txt", "requirements-mlflow.txt", "requirements-dashboard.txt", "requirements-site.txt")
# an optional extra's module whose distribution has another name: how it is pinned where it is not installed
EXTRA_DISTRIBUTIONS = {"material": "mkdocs-material"}


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
    """{normalised distribution name: version} of the requirements files' `name==version` lines."""
    lines = [line for name in REQUIREMENTS for line in Path(ROOT, name).read_text().splitlines()]
    return {normalised(name): version
            for name, version in (line.split("==") for line in lines if line.strip() and not line.startswith("#"))}


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def third_party_imports() -> frozenset:
    """The top-level names of the third-party modules the code imports (parsed once for the tests that ask)."""
    sources = [path for folder in FOLDERS for path in Path(ROOT, folder).glob("*.py")]
    return frozenset(set().union(*map(imported_top_level_names, sources)) - set(sys.stdlib_module_names) - LOCAL)


def unpinned_imports(distributions: dict) -> dict:
    """{module: its distributions} of the third-party modules the code imports that no requirements file pins. A module
    that is not installed (an optional extra, such as MLflow on a machine that installed requirements.txt alone) has
    no distribution here: its own name must then be pinned."""
    requirements = pinned()
    return {module: distributions.get(module) for module in third_party_imports()
            if not any(normalised(name) in requirements
                       for name in distributions.get(module, [EXTRA_DISTRIBUTIONS.get(module, module)]))}


def test_requirements_pin_every_third_party_package_the_code_imports():
    unpinned = unpinned_imports(importlib.metadata.packages_distributions())
    assert not unpinned, f"imported but not pinned in requirements.txt: {unpinned}"


def test_an_optional_extra_that_is_not_installed_still_counts_as_pinned():
    """The README's test command on a fresh machine installs requirements.txt alone: MLflow is not there."""
    distributions = {module: names for module, names in importlib.metadata.packages_distributions().items()
                     if module != "mlflow"}
    assert unpinned_imports(distributions) == {}
    assert "mlflow" in unpinned_imports({**distributions, "mlflow": ["not-mlflow"]})


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


def test_only_the_registry_names_a_script_and_only_its_definition_and_section_an_experiment():
    """The sweep and the report read what a variant is from the registry (sweep/variants.py) and what an experiment is
    from its object (sweep/experiments.py): no other module of sweep/ or report/ names a script, and an experiment's
    name stands only in sweep/experiments.py and its own section module (its `section`; a command set's: its
    `report_module`), in code, strings, comments and docstrings alike."""
    from sweep.experiments import ALL, COMMAND_SETS
    from sweep.variants import SCRIPTS

    script = re.compile(r"\b(" + "|".join(map(re.escape, SCRIPTS)) + r")\b")
    modules = {f"{path.parent.name}/{path.name}": path.read_text()
               for folder in ("sweep", "report") for path in sorted((Path(ROOT) / folder).glob("*.py"))}
    naming_scripts = {name: sorted(set(script.findall(text))) for name, text in modules.items() if script.search(text)}
    assert list(naming_scripts) == ["sweep/variants.py"], f"modules that name a script (ask the registry): {naming_scripts}"
    assert set(naming_scripts["sweep/variants.py"]) == set(SCRIPTS)
    strangers = {}
    for experiment in ALL + COMMAND_SETS:  # a command set's own module is its report module
        name = re.compile(rf"(?<![-\w]){re.escape(experiment.name)}(?![-\w])")
        naming = {module for module, text in modules.items() if name.search(text)}
        own = {"sweep/experiments.py", f"report/{experiment.section or experiment.report_module}.py"}
        strangers.update({experiment.name: naming} if naming - own else {})
    assert not strangers, f"experiments named outside their definition and section (ask its object): {strangers}"
    sections = {experiment.name: experiment.section for experiment in ALL if not experiment.prepares}
    assert all(f"report/{section}.py" in modules for section in sections.values()), sections


def test_the_reports_answer_sections_and_their_order_come_from_the_experiments():
    """report/main.py keeps no list of sections: each experiment's `section` names its module, and its answer_rank and
    headline_rank place it; experiments that share a section share both ranks."""
    from report import main
    from sweep.experiments import ALL

    with_section = [experiment for experiment in ALL if experiment.section]
    ranks = {}
    for experiment in with_section:
        assert ranks.setdefault(experiment.section, (experiment.answer_rank, experiment.headline_rank)) == (
            experiment.answer_rank, experiment.headline_rank), experiment.name
    for order, rank in ((main.ANSWER_SECTIONS, 0), (main.HEADLINE_ORDER, 1)):
        assert [function.__name__ for function in order] == [
            f"section_{section}" for section in sorted(ranks, key=lambda section: ranks[section][rank])]
        assert [function.__module__ for function in order] == [
            f"report.{function.__name__.removeprefix('section_')}" for function in order]
    assert all(len({pair[rank] for pair in ranks.values()}) == len(ranks) for rank in (0, 1))  # no tie: no order by ALL
