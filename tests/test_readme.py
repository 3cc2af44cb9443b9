"""The README tried as a new user: its answer comes first, its table and numbers are the sittings', its links (and the
docs') resolve and every command it shows runs (a dry run where the real one is long); the docs' one list of the
variants is the code's."""

import importlib.metadata
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import answer_table
from report import cnn, search as search_report, standings, stats

from helpers import COMPILE_MODE, DQN_COMPILE_MODE, EAGER_FLAG
from sweep.variants import VARIANTS
from test_benchmark import REPO

README = (REPO / "README.md").read_text()
DOCS = sorted((REPO / "docs").glob("*.md"))
ANSWER = README.split("\n## The answer\n")[1].split("\n## ")[0]
TABLE = "\n".join(answer_table.answer_lines(REPO / "results"))
# the README's verdicts (links from the repository's root) and the findings in full in docs/results.md (links from docs/)
IN_FULL = (REPO / "docs" / "results.md").read_text().split("\n## The answer in full\n")[1].split("\n## ")[0]
FINDINGS = [(line, REPO) for line in ANSWER.splitlines() if line.startswith("- ")] + [
    (line, REPO / "docs") for line in IN_FULL.splitlines() if line.startswith("- ")]


def heading_anchor(heading):
    """GitHub's anchor of a markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text):
    """Every heading anchor of a markdown text (a repeated heading gets -1, -2, … as on GitHub)."""
    seen, found = {}, set()
    for heading in re.findall(r"^#{1,6} (.+)$", re.sub(r"```.*?```", "", text, flags=re.S), re.M):
        anchor = heading_anchor(heading)
        found.add(f"{anchor}-{seen[anchor]}" if anchor in seen else anchor)
        seen[anchor] = seen.get(anchor, 0) + 1
    return found


def links(text):
    """The targets of the markdown links and images of a text, code blocks and inline code left out."""
    text = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", text, flags=re.S))
    return re.findall(r"\]\(([^)\s]+)\)", text)


def readme_commands():
    """Each command line of the README's bash blocks, its comment dropped."""
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    return [line.split(" #")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_readme_opens_with_the_answer_on_its_first_screen_and_stays_under_200_lines():
    lines = README.splitlines()
    assert len(lines) <= 200
    answer_start = lines.index("## The answer")
    # the decision bullets on the first screen; the tables, one per metric, below them
    bullets_end = next(number for number, line in enumerate(lines) if number > answer_start + 1 and not line.startswith(
        "- "))
    assert answer_start < 8 and bullets_end <= 21, (answer_start, bullets_end)
    assert TABLE in ANSWER


def words(text):
    """The words a reader reads: a link's text counts, its target does not."""
    return re.sub(r"\]\([^)]*\)", "]", text).split()


def test_the_answer_at_a_glance_is_the_figure_and_at_most_8_short_verdicts_in_400_words_before_the_first_table():
    before_table = ANSWER.split("\n|")[0].split("\n**")[0]
    verdicts = [line for line in before_table.splitlines() if line.startswith("- ")]
    assert "![" in before_table and "(docs/img/answer.png)" in before_table
    assert len(verdicts) <= 8 and len(words(before_table)) <= 400, (len(verdicts), len(words(before_table)))
    assert max(len(words(verdict)) for verdict in verdicts) <= 36  # "about 30": the longest of the lines
    assert all(re.search(r"\]\([^)]+REPORT\.md\)", verdict) for verdict in verdicts)  # each links its detail


def test_the_readme_holds_the_answer_table_the_sittings_give_now(tmp_path, capsys):
    answer_table.main(["--check", str(REPO / "README.md")])
    changed = tmp_path / "README.md"
    changed.write_text(README.replace("| 2.57× |", "| 2.58× |"))
    with pytest.raises(SystemExit) as stop:
        answer_table.main(["--check", str(changed)])
    assert stop.value.code == 1 and "does not hold the table" in capsys.readouterr().err


@pytest.mark.slow  # a fresh process for one error line: the fast subset probes the scripts' bad input only
@pytest.mark.parametrize("summary", [None, "header only"])
def test_the_answer_table_tool_stops_on_a_missing_or_empty_sweep_with_one_line(tmp_path, summary):
    if summary:
        (tmp_path / "cpu-2core-exp7").mkdir()
        header = (REPO / "results" / "cpu-2core-exp7" / "summary.csv").read_text().splitlines()[0]
        (tmp_path / "cpu-2core-exp7" / "summary.csv").write_text(header + "\n")
    result = subprocess.run([sys.executable, "tools/answer_table.py", "--results", str(tmp_path)], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("answer_table.py: error: ")
    assert "cpu-2core-exp7" in result.stderr


def test_each_answer_table_holds_one_metric_and_its_rows_name_the_scripts_measured_in_it():
    per_iteration, search, continuous = (answer_table.table_lines(REPO / "results", table)
                                          for table in answer_table.TABLES)
    names = [[row.split(" | ")[0] for row in table[2:-2]] for table in (per_iteration, search, continuous)]
    assert "search" not in per_iteration[0] and "hopper" not in per_iteration[0].lower()
    assert search[0] == "| design (the scripts measured) | DQN search, CPU | PPO search, CPU |"
    assert "| Flax Linen (`dqn_linen.py` / `ppo_linen.py`)" in names[1]  # the DQN and the PPO script it searched
    assert "| Flax Linen, training in one `lax.scan` (`ppo_linen_scan.py`)" in names[1]
    assert all("continuous" not in name for name in names[0] + names[1])
    assert names[2] and all("`ppo_continuous_" in name and "/" not in name for name in names[2])
    assert search[-2].startswith("| *the fastest's wall time* |")


def test_the_cnn_table_gives_each_frameworks_ratio_with_its_range_and_the_report_crowns_the_same_fastest():
    """exp14's table: per case, the fastest script is the report's, every other cell gives its ratio's range over the
    repeats, and a row names only the scripts measured in it (NNX's cached_partial has no Atari script)."""
    lines = answer_table.cnn_lines(REPO / "results")
    report = (REPO / "results" / "cpu-2core-exp14" / "REPORT.md").read_text()
    cells, _, _ = answer_table.cnn_cells(REPO / "results")
    for case, by_label in cells.items():
        fastest = [label for label, text in by_label.items() if text == "1"]
        assert len(fastest) == 1 and f"**{case}**: fastest {fastest[0]}" in report
        assert all(re.fullmatch(r"\d\.\d\d×=? \[\d\.\d\d–\d\.\d\d\]", text) for label, text in by_label.items()
                   if label != fastest[0])
    assert "| Flax NNX, `cached_partial` (`ppo_nnx_cached.py`) |" in "\n".join(lines)
    assert lines[-1].startswith("| *the machine* | AMD EPYC (Zen 4")


def test_the_search_table_names_each_columns_baseline_and_marks_those_level_with_it_by_the_reports_rule():
    """Each column's ratios share one baseline, named in the caption: the DQN column's is exp10's report's baseline
    (the fastest at one env and one worker), the designs level with it marked = as the report marks them; the PPO
    column's is exp11's populations of the size that finished first, one study a way (no range, no marker)."""
    caption = answer_table.search_caption(REPO / "results")
    assert caption.startswith("**A search:** its wall time relative to one baseline per column, named here")
    assert "against Flax NNX, tree mode (`dqn_nnx.py`), the fastest there (= level with it:" in caption
    assert "against `ppo_linen_scan.py`'s populations of 64 agents a process, the fastest" in caption
    assert "the design that finished it first" not in caption and caption in TABLE
    cells, _ = answer_table.cells_of(REPO / "results", answer_table.SEARCH)
    report = (REPO / "results" / "cpu-2core-exp10-repeats" / "REPORT.md").read_text()
    assert cells["Flax NNX, tree mode"] == "1" and "every ratio is to **Flax NNX + JAX env**" in report
    assert cells["Flax Linen"].endswith("×=") and cells["Equinox"].endswith("×=")
    assert "=" not in cells["PyTorch, NumPy env"] and f"| {cells['PyTorch, NumPy env'][:-1]}× (" in report
    population, _ = answer_table.cells_of(REPO / "results", answer_table.POPULATION)
    assert population["Flax Linen, training in one `lax.scan`"] == "1" and "=" not in "".join(population.values())
    assert answer_table.baseline_of is search_report.baseline_of and answer_table.level_with is search_report.level_with


def test_a_cnn_cell_is_one_statistic_the_median_of_its_per_repeat_ratios_with_their_range():
    """exp14's Atari Equinox: the ratio of medians is 1.62 (5.22 s against 3.22 s), not its per-repeat ratios'
    median; the cell gives the median of those ratios, 1.68, with their range, by report/cnn.py's rule."""
    cells, _, _ = answer_table.cnn_cells(REPO / "results")
    assert cells["Nature CNN"]["atari_equinox (jit)"] == "1.68× [1.45–1.69]"
    assert answer_table.repeat_ratios is cnn.repeat_ratios
    assert "the median over the repeats of the ratio repeat by repeat" in answer_table.CNN_CAPTION


def test_the_answer_tables_rule_is_the_reports_own():
    """The table's ratio of torch at small is the one the model-size report prints for it (report/standings.py's rule)."""
    report = (REPO / "results" / "cpu-2core-exp7" / "REPORT.md").read_text()
    cells, _ = answer_table.cells_of(REPO / "results", answer_table.COLUMNS[0])
    row = next(line for line in report.splitlines() if re.match(r"\| small \| torch \(env-jit\) \|", line))
    assert cells["PyTorch, JAX env"].rstrip("†") in row.split("|")[5]
    # the rule is imported, not copied: the tool's fastest, ratio and geometric mean are the report's own functions
    assert (answer_table.fastest_label, answer_table.relative_to, answer_table.geometric_mean) == (
        standings.fastest_label, standings.relative_to, stats.geometric_mean)


@pytest.mark.parametrize("bullet,base", FINDINGS, ids=lambda found: found[4:30] if isinstance(found, str) else "")
def test_every_number_of_the_decision_guide_is_in_the_answer_table_or_the_report_it_cites(bullet, base):
    reports = [target for target in links(bullet) if target.endswith("REPORT.md")]
    sources = TABLE + "".join((base / target).read_text() for target in reports)
    numbers = re.findall(r"(?<![\w.])\d+\.\d+", bullet)
    assert all(number in sources for number in numbers), [number for number in numbers if number not in sources]


METRICS = ("steady iteration", "whole run", "wall time", "time to reach")
ENVS = ("CartPole-v1", "Acrobot-v1", "Breakout-MinAtar", "Asterix-MinAtar", "Doors", "envs)", "Pendulum-v1", "hopper")


@pytest.mark.parametrize("bullet", [line for line, _ in FINDINGS if "×" in line], ids=lambda bullet: bullet[4:30])
def test_every_ratio_of_the_decision_guide_names_its_metric_and_the_envs_it_holds_on(bullet):
    assert any(metric in bullet for metric in METRICS), f"names none of {METRICS}"
    assert any(env in bullet for env in ENVS), f"names none of {ENVS}"
    if "GPU" in bullet:  # one run per cell, on the image's own jax and torch
        assert "one run per cell" in bullet and "not our pins" in bullet


@pytest.mark.parametrize("page", [REPO / "README.md", *DOCS], ids=lambda page: page.name)
def test_every_link_and_image_of_the_readme_and_docs_resolves(page):
    text = page.read_text()
    broken = []
    for target in links(text):
        if re.match(r"[a-z]+:", target):
            broken.append(f"{target}: points outside the repository")
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text()):
            broken.append(f"{target}: no such heading")
    assert not broken, broken


# how each command the README shows is tried: the part a test can run as written, the rest by a dry run or shorter
CAPS = {"ppo": ["--num-iterations", "2", "--num-steps", "64"],
        "dqn": ["--total-timesteps", "2000", "--learning-starts", "1000", "--iteration-steps", "1000"]}


def installed_as_pinned():
    """The requirements whose installed version is not the pinned one."""
    wrong = []
    for line in (REPO / "requirements.txt").read_text().splitlines():
        name, _, version = line.partition("==")
        if importlib.metadata.version(name).split("+")[0] != version:
            wrong.append(line)
    return wrong


def tried(command, tmp_path):
    """The argv a test runs for one README command (None: checked without a process)."""
    argv = shlex.split(command)
    if argv[:2] == ["python", "-m"]:
        return None
    if argv[0] == "./benchmark.sh":
        return ["bash", *argv] + (["--dry-run", "--out", str(tmp_path / "sweep")] if "--help" not in argv else [])
    if argv[1] == "plot.py":
        return [sys.executable, "plot.py", str(tmp_path / "sweep")]
    if argv[1] == "tune.py":  # one short trial, into tmp_path (the last of a repeated flag wins)
        script = next(index for index, word in enumerate(argv) if word.endswith(".py") and index > 1)
        return [sys.executable, *argv[1:script], "--trials", "1", "--eval-seeds", "0", "--out", str(tmp_path / "study"),
                *argv[script:], *CAPS[argv[script][:3]]]
    return [sys.executable, *argv[1:], *CAPS[argv[1][:3]], "--log-dir", str(tmp_path / "runs")]


def test_every_readme_command_is_one_the_readme_test_knows_how_to_try():
    parts = [part.strip() for command in readme_commands() for part in command.split("&&")]
    assert parts.count("pip install -r requirements.txt") == 2 and installed_as_pinned() == []
    assert "python -m pytest" in parts and "python ppo_linen.py" in parts  # the README's two set-up commands
    for part in parts:
        assert part.startswith(("pip install", "python", "./benchmark.sh")), part


def test_ci_runs_exactly_the_readmes_test_command_after_the_optional_extras():
    """.ci/run ends with the README's test command as written; what it installs before is an optional extra (MLflow and
    optuna-dashboard, the results site's mkdocs-material, constrained to requirements.txt's pins; SLURM; chromium), never
    requirements.txt itself."""
    lines = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    test_command = [command for command in readme_commands() if "pytest" in command]
    assert test_command == ["pip install -r requirements.txt && python -m pytest"] and lines[-1] == test_command[0]
    installs = [line for line in lines[:-1] if "pip install" in line and "--upgrade pip" not in line]
    assert installs == ["pip install -r requirements-mlflow.txt -r requirements-dashboard.txt -r requirements-site.txt "
                        "-c requirements.txt"]


def test_the_readmes_sweep_commands_run_as_dry_runs(tmp_path):
    commands = [command for command in readme_commands() if command.startswith("./benchmark.sh")]
    assert commands
    for command in commands:
        result = subprocess.run(tried(command, tmp_path), cwd=REPO, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (command, result.stderr[-2000:])


def readme_commands_run(folder):
    """Each script command of the README as written, shortened to a few iterations, then plot.py on a sweep (the smoke
    sample), from `folder`: [(command, its completed process)], and the report plot.py wrote."""
    folder = Path(folder)
    folder.mkdir()
    subprocess.run(["cp", "-r", str(REPO / "results" / "cpu-quick"), str(folder / "sweep")], check=True)
    commands = [part.strip() for command in readme_commands() for part in command.split("&&")
                if part.strip().startswith("python") and not part.strip().startswith("python -m")]
    results = [(command, subprocess.run(tried(command, folder), cwd=REPO, capture_output=True, text=True, timeout=600))
               for command in commands]
    report = folder / "sweep" / "REPORT.md"
    return results, report.read_text() if report.exists() else ""


def readme_commands_job(shared_runs, background=False):
    return shared_runs.job(("README commands",), readme_commands_run, background)


@pytest.mark.slow
@pytest.mark.background.with_args(readme_commands_job)
def test_the_readmes_script_and_plot_commands_run(shared_runs):
    results, report = readme_commands_job(shared_runs)
    assert any("plot.py" in command for command, _ in results) and len(results) >= 3
    for command, result in results:
        assert result.returncode == 0, (command, result.stderr[-2000:])
    assert report.startswith("# ")


def method_variant_cells():
    """{script: [its modes-and-flags cell, one per row]} of docs/method.md's variants table."""
    table = (REPO / "docs" / "method.md").read_text().split("\n## Variants and compile modes\n")[1].split("\n\n**Eager**")[0]
    cells = {}
    for row in re.finditer(r"^\| `(\w+\.py)` \| [^|]* \| ([^|]*) \|", table, re.M):
        cells.setdefault(row[1], []).append(row[2])
    return cells


def test_the_variants_table_of_method_md_lists_every_script_once_with_the_modes_and_flags_the_code_has():
    cells = method_variant_cells()
    scripts = [path.name for path in sorted(REPO.glob("ppo_*.py")) + sorted(REPO.glob("dqn_*.py"))]
    assert sorted(cells) == sorted(scripts) and all(len(rows) == 1 for rows in cells.values()), cells
    for script, mode in {**COMPILE_MODE, **DQN_COMPILE_MODE}.items():
        assert f"`{mode}`" in cells[script][0], (script, mode)
    for script, flag in EAGER_FLAG.items():
        assert not flag or f"`none` (`{flag}`)" in cells[script][0], (script, flag)
    for variant in VARIANTS:
        if variant.flags and not variant.eager:
            assert f"`{variant.mode}` (`{' '.join(variant.flags)}`" in cells[variant.file][0], variant.label


def test_every_committed_sitting_has_a_row_in_the_results_index_saying_whether_it_is_current():
    index = (REPO / "docs" / "results.md").read_text().split("## Every sitting")[1].split("\n## ")[0]
    rows = dict(re.findall(r"^\| \[([\w.-]+)\]\(\.\./results/\1/REPORT\.md\) \|.*\| ([^|]+) \|$", index, re.M))
    folders = {path.name for path in (REPO / "results").iterdir() if (path / "REPORT.md").exists()}
    assert set(rows) == folders
    for folder, status in rows.items():
        superseded = re.match(r"superseded by \[([\w.-]+)\]\(\.\./results/\1/REPORT\.md\)", status.strip())
        assert status.strip().startswith(("current", "superseded by", "not results")), (folder, status)
        assert superseded or not status.strip().startswith("superseded"), (folder, status)  # linked
        assert not superseded or superseded[1] in folders, (folder, status)


@pytest.mark.parametrize("page", [REPO / "README.md", *DOCS], ids=lambda page: page.name)
def test_a_sitting_is_named_by_a_link_to_its_report_never_as_plain_text(page):
    sittings = "|".join(re.escape(path.name) for path in (REPO / "results").iterdir() if (path / "REPORT.md").exists())
    prose = re.sub(r"\[[^\]]*\]\([^)]*\)", "", re.sub(r"`[^`]*`", "", re.sub(r"```.*?```", "", page.read_text(),
                                                                                   flags=re.S)))
    plain = re.findall(rf"(?<![\w-])(?:\.\./)?(?:results/)?(?:{sittings})(?![\w-])", prose)
    assert not plain, plain
