"""tools/derive.py, the one command that writes every derived file: its own writers (help.txt's counts and estimates,
docs/running.md's windows' plan, docs/tuning.md's spaces, docs/method.md's variants) bring a stale copy back to the
code's text; answer_table.py --write and the golden dry runs' --check, which it runs; its bad input. Each derived
file's freshness has its own test (test_benchmark.py, test_gpu_sitting.py, test_golden_dry_runs.py, test_tune.py,
test_readme.py, test_variants.py, test_ease_of_use.py, test_harness.py, test_reports.py)."""
import re

import pytest

import answer_table
import derive
import test_golden_dry_runs
from test_benchmark import REPO as ROOT
from test_readme import TABLE

HELP = (ROOT / "sweep" / "help.txt").read_text()
RUNNING = (ROOT / "docs" / "running.md").read_text()


def test_help_text_restores_each_grids_counts_totals_and_how_long_figures_from_a_stale_copy():
    stale = HELP
    for pattern, replacement in ((r"the published study's 231 runs:", "the published study's 31 runs:"),
                                 (r"^  exp7    208 runs", "  exp7     28 runs"),  # the default grid's
                                 (r"^  exp14    17 runs  \(f\)", "  exp14     7 runs  (f)"),  # a GPU part's
                                 (r"^  warmup    1 run  ", "  warmup    2 runs "),
                                 (rf"(  exp6  ){derive.FIGURE}", r"\1about 9 min")):
        changed = re.sub(pattern, replacement, stale, count=1, flags=re.M)
        assert changed != stale, pattern
        stale = changed
    assert derive.help_text(stale) == HELP
    assert derive.help_text(HELP) == HELP
    with pytest.raises(derive.InputError, match="names 'nowhere', which is not a grid"):
        derive.selection_args("nowhere")


def test_windows_text_rewrites_the_plan_table_from_the_gpu_grids_parts_and_leaves_the_rest():
    rows = RUNNING.split("|---|---|---|---|---|---|\n")[1].split("\n\n")[0]
    stale = RUNNING.replace(rows, rows.split("\n")[0])  # one row left, with a stale part list
    assert derive.windows_text(stale) == RUNNING
    parts = [f"| ({part.letter})" for part in derive.grids.GPU_PARTS]
    assert [row.split(" | ")[0] for row in rows.split("\n")] == parts
    with pytest.raises(derive.InputError, match="holds no table with the header"):
        derive.windows_text("# no table\n")


def test_windows_text_rewrites_the_reference_grids_table_of_its_parts_from_a_stale_copy():
    rows = RUNNING.split(derive.REFERENCE_HEADER)[1].split("\n\n")[0]
    assert derive.windows_text(RUNNING.replace(rows, rows.split("\n")[0])) == RUNNING
    assert [row.split(" | ")[0] for row in rows.split("\n")] == [
        f"| ({part.letter})" for part in derive.grids.REFERENCE_PARTS]


def test_spaces_text_rewrites_tuning_mds_table_of_the_default_spaces_from_a_stale_copy():
    tuning = (ROOT / "docs" / "tuning.md").read_text()
    table = derive.spaces_table()
    assert table in tuning
    stale = tuning.replace(table, "\n".join(table.splitlines()[:3]) + "\n| `gone` | 1 | 2 | 3 |\n")
    assert stale != tuning and derive.spaces_text(stale) == tuning
    with pytest.raises(derive.InputError, match="holds no table of the default spaces"):
        derive.spaces_text("# no table\n")


def test_variants_text_rewrites_method_mds_table_of_variants_from_a_stale_copy():
    method = (ROOT / "docs" / "method.md").read_text()
    rows = method.split(derive.VARIANTS_HEADER)[1].split("\n\n")[0].split("\n")
    assert [row.split("`")[1] for row in rows] == [f"{script}.py" for script in derive.variants.SCRIPTS]
    assert "| `ppo_torch_native.py` | PyTorch, env in torch | `eager` (default), `compile` (`--compile`), " \
           "`compile+cudagraphs` (`--compile --cudagraphs`, GPU only) |" in method
    stale = method.replace("\n".join(rows), "\n".join(rows[1:3]).replace("(default)", "(the default)"))
    assert stale != method and derive.variants_text(stale) == method
    with pytest.raises(derive.InputError, match="holds no table of variants"):
        derive.variants_text("# no table\n")


def test_suite_text_writes_the_readmes_line_from_the_newest_figure_of_each_cpu_and_suite():
    readme, running = (ROOT / "README.md").read_text(), (ROOT / "docs" / "running.md").read_text()
    rows = derive.suite_rows(running)
    line = next(line for line in readme.splitlines() if line.startswith(derive.SUITE_START))
    for cpu in {row["CPU"] for row in rows}:
        for what in ("the fast subset", "the full suite"):
            row = next(row for row in rows if row["CPU"] == cpu and row["what"] == what)  # the newest
            assert f"{what} {row['time']} ({row['runs']}, at {row['commit']}, {row['date']})" in line
    assert "1.4×" not in readme  # a ratio between CPUs that no commit measured
    older = [{**rows[0], "time": "99:99", "commit": "0000000"}]
    assert "99:99" not in derive.suite_sentence(rows + older) and "99:99" in derive.suite_sentence(older + rows)
    stale = readme.replace(line, derive.SUITE_START + " 2 min 47 s (2026-11-29)")
    assert stale != readme and derive.suite_text(stale) == readme
    with pytest.raises(derive.InputError, match="holds no line of the suite's figures"):
        derive.suite_text("# no line\n")
    with pytest.raises(derive.InputError, match="holds no table of the suite's figures"):
        derive.suite_rows("# no table\n")


def test_answer_table_write_replaces_a_stale_table_in_place_and_refuses_a_file_without_one(tmp_path, capsys,
                                                                                           monkeypatch):
    monkeypatch.setattr(answer_table, "answer_lines", lambda results: TABLE.split("\n"))  # the committed sittings'
    readme = (ROOT / "README.md").read_text()
    stale = readme.replace(TABLE, TABLE.replace("| *the machine* |", "| *the machines* |"))
    assert stale != readme
    path = tmp_path / "README.md"
    path.write_text(stale)
    answer_table.main(["--write", str(path)])
    assert path.read_text() == readme
    path.write_text("# no tables\n")
    with pytest.raises(SystemExit) as exit_info:
        answer_table.main(["--write", str(path)])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("answer_table.py: error: the file holds no answer tables")


@pytest.mark.skipif(test_golden_dry_runs.CORES != 2, reason="the golden dry runs are recorded on 2 cores")
def test_golden_check_exits_1_naming_a_case_whose_recorded_runs_differ(monkeypatch, capsys):
    case = {"quick": dict(test_golden_dry_runs.GOLDEN["quick"])}
    monkeypatch.setattr(test_golden_dry_runs, "GOLDEN", case)
    assert test_golden_dry_runs.main(["--check"]) == 0
    case["quick"]["stdout"] = case["quick"]["stdout"].replace("exp1__", "exp0__", 1)
    assert test_golden_dry_runs.main(["--check"]) == 1
    assert capsys.readouterr().err == ("test_golden_dry_runs.py: 1 dry runs differ from the recorded ones: "
                                       "quick\n")


def test_a_target_not_known_is_one_error_line_naming_the_targets(capsys):
    with pytest.raises(SystemExit) as exit_info:
        derive.main(["--only", "help", "nope"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("derive.py: error: argument --only: invalid choice: 'nope'")


def test_the_planners_files_are_fresh_by_the_tools_own_check(capsys):
    assert derive.main(["--check", "--only", "help", "windows", "spaces"]) == 0
    assert capsys.readouterr().out == "help: checking\nwindows: checking\nspaces: checking\n"


def test_a_tool_target_reports_a_stale_file_by_its_last_line_and_stops_on_a_failure(tmp_path, capsys):
    fake = tmp_path / "fake.py"  # exit status from its first argument, one line out
    fake.write_text("import sys\nprint('wrote x' if sys.argv[1] == '0' else 'x is stale')\nsys.exit(int(sys.argv[1]))\n")
    assert derive.tool(str(fake), write=("0",), check=("1",))(True) == "x is stale"
    assert derive.tool(str(fake), write=("0",), check=("0",))(True) is None
    assert derive.tool(str(fake), write=("0",))(False) is None and capsys.readouterr().out == "wrote x\n"
    with pytest.raises(derive.InputError, match="fake.py failed: x is stale"):
        derive.tool(str(fake), write=("2",))(False)
