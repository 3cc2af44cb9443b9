"""Every grid and selection lists the same runs, with the same commands in the same order, as the dry runs recorded in
tests/golden/dry_runs.json.gz (first captured from benchmark.sh before its planner moved into Python, which changed
no line of them). A change of the grid that is meant changes them: `python tests/test_golden_dry_runs.py` records the
dry runs anew (`--check`: exit 1 if they differ; both part of tools/derive.py), and the commit shows what the change
added or moved."""
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GOLDEN = json.loads(gzip.decompress((REPO / "tests" / "golden" / "dry_runs.json.gz").read_bytes()))
OUT = "/golden/out"  # never created: a dry run writes nothing
CORES = len(os.sched_getaffinity(0))


def dry_run(args, bin_dir):
    """benchmark.sh --dry-run's result for ARGS into OUT, PYTHON a bare `python` (a link to this interpreter in bin_dir),
    with 1 TiB of memory available; its stdout with the interpreter's path and the repository's normalised."""
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHON": "python",
           "BENCHMARK_MEM_AVAILABLE_KB": str(2**30)}
    result = subprocess.run(["bash", "benchmark.sh", "--dry-run", "--out", OUT, *args], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=300)
    return result, result.stdout.replace(str(Path(bin_dir) / "python"), "@PYTHON@").replace(str(REPO), "@ROOT@")


@pytest.mark.skipif(CORES != 2, reason=f"the golden exp6 lines run 2 processes at a time, as on 2 cores; here {CORES}")
@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_a_dry_run_lists_exactly_the_recorded_runs_and_commands(case, tmp_path):
    golden = GOLDEN[case]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    result, stdout = dry_run(golden["args"], bin_dir)
    assert result.returncode == 0, result.stderr
    expected, got = golden["stdout"].splitlines(), stdout.splitlines()
    first_difference = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got)))
    assert got == expected, (f"{case}: {len(got)} lines, {len(expected)} recorded; first difference at line "
                             f"{first_difference + 1}: {got[first_difference:first_difference + 1]} vs "
                             f"{expected[first_difference:first_difference + 1]}")
    if golden["runs"]:
        assert result.stderr.startswith(f"{golden['runs']} runs"), result.stderr


def record(folder) -> dict:
    """Every case's dry run now (on 2 cores), with its arguments kept: what the golden file would hold."""
    os.symlink(sys.executable, os.path.join(folder, "python"))
    recorded = json.loads(json.dumps(GOLDEN))
    for golden in recorded.values():
        result, golden["stdout"] = dry_run(golden["args"], folder)
        golden["runs"] = result.stderr.split(" runs")[0] if "--slurm" not in golden["args"] else None
    return recorded


def main(argv: list) -> int:
    """Records the dry runs anew; --check: exit status 1, one line, if they differ from the recorded ones."""
    import tempfile

    if CORES != 2:
        print(f"test_golden_dry_runs.py: error: the golden exp6 lines run 2 processes at a time; here {CORES} cores",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        recorded = record(folder)
    if argv == ["--check"]:
        stale = sorted(case for case in GOLDEN if recorded[case] != GOLDEN[case])
        if stale:
            print(f"test_golden_dry_runs.py: {len(stale)} dry runs differ from the recorded ones: {', '.join(stale)}",
                  file=sys.stderr)
        return 1 if stale else 0
    (REPO / "tests" / "golden" / "dry_runs.json.gz").write_bytes(
        gzip.compress(json.dumps(recorded, indent=0, sort_keys=True).encode(), mtime=0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
