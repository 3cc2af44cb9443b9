"""The Dockerfile's image holds what it runs: the files its COPY lines take from the build context, less what
.dockerignore leaves out, assembled into a folder as the build would, run the sweep's help, the GPU grid's dry run and
a one-iteration script there. No Docker engine runs here, so this checks the file set, not the build."""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, TINY


def dockerignore_rules(text: str) -> list:
    """[(regex, excluded)] of .dockerignore's lines, in order (the last rule that matches a path decides)."""
    rules = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        excluded = not line.startswith("!")
        pattern = line.lstrip("!").strip("/")
        regex = "".join(".*" if part == "**" else "[^/]*" if part == "*" else "[^/]" if part == "?" else re.escape(part)
                        for part in re.split(r"(\*\*|\*|\?)", pattern))
        rules.append((re.compile(regex.replace(".*/", "(.*/)?")), excluded))
    return rules


def ignored(path: str, rules: list) -> bool:
    """Whether .dockerignore leaves the context's `path` out: a rule matches it or a folder above it."""
    parts, verdict = path.split("/"), False
    for regex, excluded in rules:
        if any(regex.fullmatch("/".join(parts[:end])) for end in range(1, len(parts) + 1)):
            verdict = excluded
    return verdict


def context_files(root: str) -> list:
    """The build context: the checkout's files (tracked, and untracked ones git does not ignore)."""
    listed = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, text=True, check=True).stdout.splitlines()
    return [path for path in listed if os.path.isfile(os.path.join(root, path))]


def copied_files(dockerfile: str, context: list, rules: list) -> dict:
    """{path in the image's work folder: path in the context} of the last stage's COPY lines (no --from); a source
    that is missing or ignored fails, as the build would."""
    stage = dockerfile.split("\nFROM ")[-1].replace("\\\n", " ")
    kept, image = [path for path in context if not ignored(path, rules)], {}
    for line in stage.splitlines():
        if not line.startswith("COPY "):
            continue
        words = [word for word in shlex.split(line)[1:] if not word.startswith("--")]
        *sources, destination = words
        assert destination in (".", "./"), f"COPY into {destination}: the test assembles the work folder only"
        for source in sources:
            source = source.strip("/").removeprefix("./") if source not in (".", "./") else ""
            matched = [path for path in kept if not source or path == source or path.startswith(source + "/")]
            assert matched, f"COPY {source}: not in the build context or left out by .dockerignore"
            for path in matched:  # a file goes in by its name, a folder's contents (the context's, for ".") in place
                image[os.path.basename(path) if path == source else path[len(source) + 1 if source else 0:]] = path
    return image


@pytest.fixture(scope="module")
def image_folder(tmp_path_factory) -> Path:
    """A folder holding the image's work folder as the Dockerfile assembles it."""
    folder = tmp_path_factory.mktemp("image")
    dockerfile = Path(ROOT, "Dockerfile").read_text()
    rules = dockerignore_rules(Path(ROOT, ".dockerignore").read_text())
    for target, source in copied_files(dockerfile, context_files(ROOT), rules).items():
        (folder / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(ROOT, source), folder / target)
    for made in re.findall(r"^RUN mkdir (?:-p )?(\S+)$", dockerfile, re.M):
        (folder / made).mkdir(parents=True, exist_ok=True)
    return folder


def test_dockerignore_rules_follow_dockers_matching():
    rules = dockerignore_rules("results\n**/__pycache__\ndocs\n!docs/keep.md\n*.log\n")
    assert [path for path in ("results/a/b.json", "sweep/__pycache__/x.pyc", "__pycache__/y.pyc", "docs/a.md",
                              "docs/keep.md", "a.log", "sweep/a.log", "resultsx.py", "sweep/plan.py")
            if ignored(path, rules)] == ["results/a/b.json", "sweep/__pycache__/x.pyc", "__pycache__/y.pyc",
                                         "docs/a.md", "a.log"]


def test_the_image_holds_every_script_of_the_registry_and_none_of_what_it_leaves_out(image_folder):
    from sweep import variants

    files = {str(path.relative_to(image_folder)) for path in image_folder.rglob("*") if path.is_file()}
    assert {f"{script}.py" for script in variants.SCRIPTS} <= files
    assert {"benchmark.sh", "plot.py", "tune.py", "doors.py", "requirements.txt", "sweep/help.txt"} <= files
    assert not [path for path in files if path.startswith(("tests/", "results/", ".git/", "docs/"))]


@pytest.mark.slow
def test_the_images_files_run_the_sweeps_help_the_gpu_grids_dry_run_and_a_script(image_folder, tmp_path):
    """What the image's entry point (benchmark.sh) and a user inside it run, from its files alone."""
    def run(*command):
        result = subprocess.run(command, cwd=image_folder, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"{' '.join(command)}: {result.stderr[-2000:]}"
        return result.stdout

    assert run("./benchmark.sh", "--help").startswith("Usage: ./benchmark.sh")
    assert "ppo_torch_native.py" in run("./benchmark.sh", "--grid", "gpu", "--dry-run", "--out", str(tmp_path / "gpu"))
    run(sys.executable, "ppo_linen.py", *TINY, "--num-iterations", "1", "--log-dir", str(tmp_path / "runs"))
    assert list((tmp_path / "runs").glob("*/events.out.tfevents.*"))
