"""Writes the benchmark harness's shared code into every script: a harness change is one edit and one command.

    python tools/sync_harness.py            # write the reference's shared definitions into every script
    python tools/sync_harness.py --check    # exit 1, one line per script and definition that differs

Below its `# BENCHMARK HARNESS` banner every script holds the same EventWriter, cpu_model, peak_rss_bytes, fail and
exits_are_dropped_in as ppo_linen.py, and the same Run as its family's reference (the registry's first script of its
algorithm: ppo_linen.py, dqn_torch_gymnasium.py, ppo_continuous_linen.py, ppo_atari_linen.py; the PPO populations,
ppo_linen_scan.py and ppo_linen_pbt.py, hold Run beside their AgentRuns). What each framework must do its own way
(the argument checks, the system text, the profiler, the synchronisation, the device memory and choice) is each
script's own and left alone. tests/test_harness.py checks the same with --check's function."""
import argparse
import ast
import functools
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from sweep import variants  # noqa: E402 (after the path)

BANNER = "# BENCHMARK HARNESS"
ACROSS_FAMILIES = ("EventWriter", "cpu_model", "peak_rss_bytes", "fail", "exits_are_dropped_in")  # ppo_linen.py's
FAMILY = ("Run",)  # the family reference's


def references() -> dict:
    """{script file: {shared name: the file its definition comes from}} for every script of the registry."""
    firsts, table = {}, {}
    for script in variants.SCRIPTS:
        algorithm = variants.algorithm_of(script)
        family = firsts.setdefault(algorithm, f"{script}.py")
        table[f"{script}.py"] = {**dict.fromkeys(ACROSS_FAMILIES, variants.LINEN.file), **dict.fromkeys(FAMILY, family)}
    return table


@functools.cache
def harness_definitions(source: str) -> dict:
    """{name: (first line, last line), 0-based, end exclusive} of the functions and classes below the banner (each
    source parsed once)."""
    lines = source.splitlines()
    banner = next(index for index, line in enumerate(lines) if line.startswith(BANNER))
    return {node.name: (node.lineno - 1, node.end_lineno) for node in ast.parse(source).body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.lineno > banner}


def definition(source: str, name: str) -> list:
    """The lines of the harness's definition of `name`."""
    start, end = harness_definitions(source)[name]
    return source.splitlines()[start:end]


def synced(source: str, wanted: dict) -> str:
    """`source` with each named definition replaced by the lines `wanted` gives for it (last first, so that the
    line numbers of the others hold)."""
    lines, spans = source.splitlines(), harness_definitions(source)
    for name, (start, end) in sorted(spans.items(), key=lambda item: -item[1][0]):
        if name in wanted:
            lines[start:end] = wanted[name]
    return "\n".join(lines) + "\n"


def stale(root: str = ROOT) -> list:
    """(script, name) of every shared definition that differs from its reference's."""
    sources = {}

    def read(file):
        if file not in sources:
            with open(os.path.join(root, file)) as f:
                sources[file] = f.read()
        return sources[file]

    return [(script, name) for script, names in references().items() for name, reference in names.items()
            if definition(read(script), name) != definition(read(reference), name)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="tools/sync_harness.py", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report the scripts that differ, write nothing")
    parser.add_argument("--root", default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    differing = stale(args.root)
    if args.check:
        for script, name in differing:
            print(f"sync_harness.py: {script}: {name} differs from its reference's", file=sys.stderr)
        return 1 if differing else 0
    for script in dict.fromkeys(script for script, _ in differing):
        path = os.path.join(args.root, script)
        with open(path) as f:
            source = f.read()
        wanted = {}
        for name, reference in references()[script].items():
            with open(os.path.join(args.root, reference)) as f:
                wanted[name] = definition(f.read(), name)
        with open(path, "w") as f:
            f.write(synced(source, wanted))
        print(f"wrote {script}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
