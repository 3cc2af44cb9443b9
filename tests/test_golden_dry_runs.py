"""Every grid and selection lists the same runs, with the same commands in the same order, as the dry runs recorded in
tests/golden/dry_runs.json.gz (captured from benchmark.sh before its planner moved into Python; the estimate's
wording may change, the runs may not)."""
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GOLDEN = json.loads(gzip.decompress((REPO / "tests" / "golden" / "dry_runs.json.gz").read_bytes()))
OUT = "/golden/out"  # never created: a dry run writes nothing
CORES = len(os.sched_getaffinity(0))


@pytest.mark.skipif(CORES != 2, reason=f"the golden exp6 lines run 2 processes at a time, as on 2 cores; here {CORES}")
@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_a_dry_run_lists_exactly_the_recorded_runs_and_commands(case, tmp_path):
    golden = GOLDEN[case]
    # PYTHON as a bare name, the way the recorded commands name it; a link to this interpreter under that name
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHON": "python",
           "BENCHMARK_MEM_AVAILABLE_KB": str(2**30)}
    result = subprocess.run(["bash", "benchmark.sh", "--dry-run", "--out", OUT, *golden["args"]], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    stdout = result.stdout.replace(str(bin_dir / "python"), "@PYTHON@").replace(str(REPO), "@ROOT@")
    stdout = stdout.replace(shutil.which("python", path=str(bin_dir)) or "@PYTHON@", "@PYTHON@")
    expected, got = golden["stdout"].splitlines(), stdout.splitlines()
    first_difference = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got)))
    assert got == expected, (f"{case}: {len(got)} lines, {len(expected)} recorded; first difference at line "
                             f"{first_difference + 1}: {got[first_difference:first_difference + 1]} vs "
                             f"{expected[first_difference:first_difference + 1]}")
    if golden["runs"]:
        assert result.stderr.startswith(f"{golden['runs']} runs"), result.stderr
