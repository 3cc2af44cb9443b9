"""tools/ease_of_use.py: the committed docs/ease-of-use.md is what the tool writes now, --check catches an altered page,
the line counts and sibling diffs on synthetic scripts, a row for every script, and its bad input. No training run."""
import glob
import os
import shutil
import subprocess
import sys

import pytest

import ease_of_use as eou
from helpers import ROOT
from sweep import variants

TOOL = os.path.join(ROOT, "tools", "ease_of_use.py")
PAGE = os.path.join(ROOT, "docs", "ease-of-use.md")
SYNTHETIC = '''"""A module docstring."""
import os

# a comment
    # an indented comment

def f(x):  # code with a comment
    """A docstring."""
    return x + 1
# BENCHMARK HARNESS: below, not counted
def g():
    return 2
'''


def run_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, TOOL, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_committed_page_is_what_the_tool_writes_now():
    result = run_tool("--check")
    assert result.returncode == 0, result.stderr


def test_check_fails_with_one_line_when_the_page_is_altered_or_missing(tmp_path):
    altered = tmp_path / "page.md"
    shutil.copy(PAGE, altered)
    assert run_tool("--check", "--page", str(altered)).returncode == 0  # the copy itself passes
    altered.write_text(altered.read_text().replace("| 1.00 |", "| 0.99 |", 1))
    for page in (altered, tmp_path / "absent.md"):
        result = run_tool("--check", "--page", str(page))
        assert result.returncode == 1
        assert result.stderr.count("\n") == 1 and str(page) in result.stderr and "ease_of_use.py" in result.stderr
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "absent.md").exists()  # --check writes nothing


def test_algorithm_lines_are_those_above_the_banner_neither_blank_nor_only_a_comment(tmp_path):
    script = tmp_path / "ppo_synthetic.py"
    script.write_text(SYNTHETIC)
    part, total = eou.algorithm_part(str(script))
    assert total == 12 and len(part) == 9 and part[-1] == '    return x + 1'
    # the module docstring, the import, def, the docstring, return: comments, indented comments and blanks are not code
    assert eou.code_lines(part) == 5


def test_sibling_diff_counts_added_and_removed_lines_above_the_banner_only(tmp_path):
    sibling, script = tmp_path / "a.py", tmp_path / "b.py"
    sibling.write_text("x = 1\ny = 2\nz = 3\n# BENCHMARK HARNESS\nh = 1\n")
    script.write_text("x = 1\ny = 20\nz = 3\nw = 4\n# BENCHMARK HARNESS\nh = 2\nextra = 3\n")
    old, new = eou.algorithm_part(str(sibling))[0], eou.algorithm_part(str(script))[0]
    assert eou.diff_counts(old, new) == (2, 1)  # y changed (+1 −1), w added (+1); the harness's changes not counted
    assert eou.diff_counts(old, old) == (0, 0)
    assert eou.diff_counts(old, []) == (0, 3)


def test_every_top_level_ppo_and_dqn_script_has_a_row_and_a_sibling_of_its_family():
    scripts = {os.path.basename(path) for pattern in ("ppo_*.py", "dqn_*.py")
               for path in glob.glob(os.path.join(ROOT, pattern))}
    assert set(eou.SCRIPTS) == scripts
    with open(PAGE) as f:
        rows = [line for line in f if line.startswith("| `")]
    assert {row.split("`")[1] for row in rows} == scripts
    assert len(rows) == sum(len(script.modes) for script in eou.SCRIPTS.values())
    for name, script in eou.SCRIPTS.items():
        assert script.sibling is None or script.sibling[:4] == name[:4], name
    for row in variants.VARIANTS:  # the rows with a note are listed, their siblings the registry's
        assert (row.mode in [mode.mode for mode in eou.SCRIPTS[row.file].modes]) == bool(row.note), row.label
        assert eou.SCRIPTS[row.file].sibling == (f"{row.sibling}.py" if row.sibling else None), row.label
    assert sorted(name for name, script in eou.SCRIPTS.items() if script.sibling is None) == [
        "dqn_linen.py", "ppo_atari_linen.py", "ppo_continuous_linen.py", "ppo_linen.py"]


def test_a_mode_is_timed_in_the_first_sweep_that_ran_it_and_an_untimed_one_says_why_where_the_tool_knows():
    def ran(*pairs):  # a sweep's summary rows of its cell, and its system.json
        return [{"variant": variant, "compile_mode": mode} for variant, mode in pairs], {}

    first, second = list(eou.SWEEPS)[:2]
    sweeps = {label: ran() for label in eou.SWEEPS} | {second: ran(("ppo_new", "jit"))}
    assert eou.timed_in(sweeps, "ppo_new", "jit") == second
    sweeps[first] = ran(("ppo_new", "jit"))
    assert eou.timed_in(sweeps, "ppo_new", "jit") == first
    assert eou.timed_in(sweeps, "ppo_new", "none") is None
    assert eou.untimed(eou.Mode("jit", "a note", "new (jit)"), variants.PPO) == "no sweep"
    assert eou.untimed(eou.Mode("jit", "a note", "new (jit)"), variants.PPO_ATARI).startswith("no sweep (exp14's")


@pytest.fixture
def copied_root(tmp_path):
    """The scripts and the sweeps' summary.csv and system.json the tool reads, in a folder of their own."""
    for path in glob.glob(os.path.join(ROOT, "ppo_*.py")) + glob.glob(os.path.join(ROOT, "dqn_*.py")):
        shutil.copy(path, tmp_path)
    for sweep in eou.SWEEPS.values():
        os.makedirs(tmp_path / "results" / sweep.folder)
        for name in ("summary.csv", "system.json"):
            shutil.copy(os.path.join(ROOT, "results", sweep.folder, name), tmp_path / "results" / sweep.folder)
    return tmp_path


def test_the_copied_repository_gives_the_committed_page(copied_root):
    result = run_tool("--root", str(copied_root), "--page", PAGE, "--check")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("break_it, expected", [
    (lambda root: (root / "ppo_torch.py").write_text((root / "ppo_torch.py").read_text().replace(
        "# BENCHMARK HARNESS", "# benchmark harness")), "ppo_torch.py has no line starting '# BENCHMARK HARNESS'"),
    (lambda root: (root / "ppo_new.py").write_text("# BENCHMARK HARNESS\n"),
     "ppo_new.py: no row of sweep/variants.py with a note"),
    (lambda root: (root / "results" / "cpu-2core-exp7" / "summary.csv").unlink(), "results/cpu-2core-exp7"),
])
def test_bad_input_is_one_error_line_and_exit_2_without_traceback(copied_root, break_it, expected):
    break_it(copied_root)
    page = copied_root / "page.md"
    result = run_tool("--root", str(copied_root), "--page", str(page))
    assert result.returncode == 2
    assert result.stderr.startswith("ease_of_use.py: error: ") and result.stderr.count("\n") == 1
    assert expected in result.stderr and "Traceback" not in result.stderr
    assert not page.exists()
