"""The benchmark harness of every script: one section at the end of the file, under its family's banner, with the same
code in every script of a family (PPO's, DQN's) except what each framework must do its own way, and only code that its
family runs; the algorithm, main() included, above it."""
import ast
import math
import os
import re
import shutil
import signal

import pytest

import ppo_linen
import sync_harness
from helpers import (
    ATARI_SCRIPTS, CONTINUOUS_GYMNASIUM_SCRIPTS, CONTINUOUS_SCRIPTS, DQN_SCRIPTS, PBT_SCRIPTS, ROOT, SCRIPTS, read_run,
)

BANNER_RULE = "# " + "=" * 118
# the harness's functions and classes; those that each framework (or env backend) writes its own way are allowed to
# differ: the argument checks (which envs, which devices), the system text (package versions, compile mode, device
# name), the profiler, the device synchronisation (torch only: JAX passes jax.block_until_ready), the device memory
# peak, and the device choice (where a script keeps it in its harness)
SHARED = {"EventWriter", "cpu_model", "peak_rss_bytes", "fail", "exits_are_dropped_in", "Run"}
# the two families' harnesses share all of SHARED but Run: DQN's has no --sync-timing phases (its check_args refuses the
# flag: an iteration's acting and learning cannot be timed apart) and no PPO loss (explained variance) to let through
FAMILIES = {"PPO": SCRIPTS + PBT_SCRIPTS, "DQN": DQN_SCRIPTS, "PPO, continuous actions": CONTINUOUS_SCRIPTS,
            "PPO, Atari": ATARI_SCRIPTS}
ACROSS_FAMILIES = SHARED - {"Run"}
FRAMEWORK_SPECIFIC = {"check_args", "system_info", "profile_trace", "synchronize", "peak_device_bytes", "select_device"}
# ppo_linen_scan.py, ppo_linen_pbt.py and dqn_linen_vmap.py train --num-seeds agents in one process: one Run per agent,
# driven as one by their AgentRuns (which also starts the run), and the range check each agent's --hparams values pass;
# the PPO scripts also read the --hparams file (agent_settings, which main's seeding calls too) and check it apart (the
# PBT script each value of it apart: a list of one per iteration), and their agents' batch against the memory
PPO_AGENTS = {"AgentRuns", "memory_refusal", "range_problem", "hparams_problem", "agent_settings"}
AGENTS = {"ppo_linen_scan.py": PPO_AGENTS, "ppo_linen_pbt.py": PPO_AGENTS | {"value_problem"},
          "dqn_linen_vmap.py": {"AgentRuns", "range_problem"}}
# the Gymnasium scripts check a module:EnvId against Gymnasium's registry (and PPO's, its NumPy vector env)
GYMNASIUM_CHECKS = {script: {"gymnasium_spec", "vector_same_step"} for script in (
    "ppo_torch_gymnasium.py", "ppo_linen_gymnasium.py", "dqn_torch_gymnasium.py", "dqn_linen_gymnasium.py")}
# the continuous-action Gymnasium scripts refuse a Gymnasium id of discrete actions, whose space they read to say so
GYMNASIUM_CHECKS.update({script: {"discrete_actions"} for script in CONTINUOUS_GYMNASIUM_SCRIPTS})


class Sections:
    """A script's source cut at its harness banner: the banner's text, and the top-level statements above and below."""

    def __init__(self, script: str):
        with open(os.path.join(ROOT, script)) as f:
            self.source = f.read()
        lines = self.source.splitlines()
        starts = [i for i, line in enumerate(lines) if line == BANNER_RULE]
        assert len(starts) == 2, f"{script}: the banner is two rules of '=' around its text"
        self.banner = lines[starts[0] : starts[1] + 1]
        below_line = starts[1] + 1
        body = ast.parse(self.source).body
        self.above = [node for node in body if node.lineno <= below_line]
        self.below = [node for node in body if node.lineno > below_line]

    def segment(self, node) -> str:
        """The whole lines of `node`, comments included."""
        return "\n".join(self.source.splitlines()[node.lineno - 1 : node.end_lineno])

    def definitions(self, nodes) -> dict:
        """{name: source} of the functions and classes among `nodes`."""
        return {node.name: self.segment(node) for node in nodes if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


ALL_SCRIPTS = SCRIPTS + PBT_SCRIPTS + DQN_SCRIPTS + CONTINUOUS_SCRIPTS + ATARI_SCRIPTS
SECTIONS = {script: Sections(script) for script in ALL_SCRIPTS}  # every family's: one harness


def test_every_script_has_its_familys_banner_and_starts_its_run_the_same_way():
    first = SECTIONS[SCRIPTS[0]]
    for family in FAMILIES.values():
        assert SECTIONS[family[0]].banner[1].startswith("# BENCHMARK HARNESS: ")
        assert all(SECTIONS[script].banner == SECTIONS[family[0]].banner for script in family)
    for script, sections in SECTIONS.items():
        start = sections.segment(sections.below[-1])
        if script in AGENTS:  # the agents' runs, started as one
            start = re.sub(r"\bruns\b", "run", start.replace("AgentRuns(", "Run("))
        assert start == first.segment(first.below[-1])
    assert 'if __name__ == "__main__":\n    run = Run(tyro.cli(Args))' in first.segment(first.below[-1])


@pytest.mark.parametrize("script", ALL_SCRIPTS)
def test_the_algorithm_and_main_are_above_the_banner_and_only_the_harness_below(script):
    sections = SECTIONS[script]
    above = sections.definitions(sections.above)
    main = next(node for node in sections.above if isinstance(node, ast.FunctionDef) and node.name == "main")
    assert [arg.arg for arg in main.args.args] == ["args", "run"]
    assert not (set(above) & (SHARED | FRAMEWORK_SPECIFIC)) - {"select_device"}, "harness code above the banner"
    *definitions, start = sections.below
    assert isinstance(start, ast.If) and "__main__" in sections.segment(start.test)
    imports = [node for node in definitions if isinstance(node, (ast.Import, ast.ImportFrom))]
    below = sections.definitions(definitions)
    assert len(imports) + len(below) == len(definitions), "a statement below the banner that is no import or definition"
    allowed = SHARED | FRAMEWORK_SPECIFIC | AGENTS.get(script, set()) | GYMNASIUM_CHECKS.get(script, set())
    assert set(below) <= allowed, set(below) - allowed
    assert SHARED <= set(below)


def test_the_harness_is_the_same_line_for_line_in_every_script_of_a_family_but_what_a_framework_does_its_own_way():
    harnesses = {script: sections.definitions(sections.below) for script, sections in SECTIONS.items()}
    for family in FAMILIES.values():
        reference = harnesses[family[0]]
        for script in family:
            for name in SHARED:
                assert harnesses[script][name] == reference[name], f"{script}: {name} differs from {family[0]}'s"
    for script, harness in harnesses.items():
        for name in ACROSS_FAMILIES:
            assert harness[name] == harnesses[SCRIPTS[0]][name], f"{script}: {name} differs from {SCRIPTS[0]}'s"


@pytest.mark.parametrize("family", FAMILIES)
def test_a_familys_run_has_no_method_or_attribute_that_its_scripts_never_use(family):
    """Code that never runs is no harness: every method of the family's Run is used (called, or passed as a handler)
    and every attribute it sets is read, somewhere in the family's scripts (DQN's once carried PPO's end_phase)."""
    trees = [ast.parse(SECTIONS[script].source) for script in FAMILIES[family]]
    loaded = {node.attr for tree in trees for node in ast.walk(tree)
              if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)}
    run = next(node for node in SECTIONS[FAMILIES[family][0]].below if getattr(node, "name", None) == "Run")
    methods = {node.name for node in run.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("__")}
    stored = {target.attr for node in ast.walk(run) for target in ast.walk(node)
              if isinstance(target, ast.Attribute) and isinstance(target.ctx, ast.Store)
              and isinstance(target.value, ast.Name) and target.value.id == "self"}
    assert methods and stored and not (methods | stored) - loaded, (methods | stored) - loaded


def test_dqns_run_carries_no_sync_timing_phases_and_no_ppo_loss():
    """DQN's check_args refuses --sync-timing, and its losses have no explained variance to let through."""
    run = SECTIONS[DQN_SCRIPTS[0]].definitions(SECTIONS[DQN_SCRIPTS[0]].below)["Run"]
    for word in ("sync_timing", "time/rollout", "explained_variance", "PPO"):
        assert word not in run, word
    for script in DQN_SCRIPTS:
        check_args = SECTIONS[script].definitions(SECTIONS[script].below)["check_args"]
        assert 'if args.sync_timing:\n        return "--sync-timing: ' in check_args, script


def test_a_nan_explained_variance_is_logged_and_a_nan_loss_stops_the_run_with_exit_3(tmp_path, capsys):
    """Explained variance is NaN by design when the returns do not vary: it is no divergence (the harness, the same in
    every script, is tested here on one)."""
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    run = ppo_linen.Run(ppo_linen.Args(num_iterations=3, device="cpu", log_dir=str(tmp_path), run_name="run"))
    losses = dict.fromkeys(ppo_linen.LossInfo._fields, 0.5)
    try:
        run.start_iteration(0)
        run.log_iteration(64, {"learning_rate": 2.5e-4}, {**losses, "explained_variance": math.nan}, 0.0, 0.0, 0.0)
        run.start_iteration(1)
        with pytest.raises(SystemExit) as stop:
            run.log_iteration(128, {"learning_rate": 2.5e-4}, {**losses, "value_loss": math.inf, "explained_variance": 0.5}, 0.0, 0.0, 0.0)
    finally:
        run.close()
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert stop.value.code == 3
    assert capsys.readouterr().err == f"error: loss is inf at iteration 2; partial run in {tmp_path / 'run'}\n"
    scalars, _ = read_run(str(tmp_path / "run"))
    assert [step for step, _ in scalars["time/iteration"]] == [0, 1] and "time/total" not in scalars
    assert math.isnan(scalars["losses/explained_variance"][0][1]) and scalars["losses/value_loss"][1][1] == math.inf


def test_sync_harness_finds_a_changed_shared_definition_and_writes_the_references_back(tmp_path, capsys):
    """tools/sync_harness.py: a harness change is one edit and one command; --check is the identity above, for the
    repository as committed and for a copy where one script's fail and another's Run were changed."""
    assert sync_harness.stale() == []
    for script in ALL_SCRIPTS:
        shutil.copy(os.path.join(ROOT, script), tmp_path / script)
    changed = {DQN_SCRIPTS[-1]: ("def fail(message: str, status: int = 2):", "def fail(message: str, status: int = 3):"),
               ATARI_SCRIPTS[-1]: ("    def finish(self, peak_bytes", "    def finish(self, peak_bytes_")}
    for script, (old, new) in changed.items():
        path = tmp_path / script
        path.write_text(path.read_text().replace(old, new, 1))
    assert sorted(sync_harness.stale(str(tmp_path))) == sorted([(DQN_SCRIPTS[-1], "fail"), (ATARI_SCRIPTS[-1], "Run")])
    assert sync_harness.main(["--check", "--root", str(tmp_path)]) == 1
    assert sync_harness.main(["--root", str(tmp_path)]) == 0
    assert all((tmp_path / script).read_text() == open(os.path.join(ROOT, script)).read() for script in changed)
    assert sync_harness.main(["--check", "--root", str(tmp_path)]) == 0
