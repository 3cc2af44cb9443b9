"""Shared test helpers: run a script in a fresh process, read its TensorBoard event file."""
import glob
import os
import subprocess
import sys

import numpy as np
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the smallest config that still runs every part of the loop: 2 minibatches, 2 epochs
TINY = ["--num-envs", "4", "--num-steps", "16", "--num-minibatches", "2", "--update-epochs", "2"]
ALWAYS_TAGS = {
    "charts/learning_rate", "charts/SPS", "losses/value_loss", "losses/policy_loss", "losses/entropy",
    "losses/approx_kl", "losses/old_approx_kl", "losses/clipfrac", "losses/explained_variance",
    "time/iteration", "time/startup", "time/total", "memory/peak_rss_bytes",
}
SYNC_TAGS = {"time/rollout", "time/update"}

# every variant and the flag that turns its compilation off (None: the script always compiles)
EAGER_FLAG = {
    "ppo_linen.py": "--no-jit",
    "ppo_nnx.py": "--no-jit",
    "ppo_nnx_cached.py": None,
    "ppo_nnx_tree.py": None,
    "ppo_equinox.py": "--no-jit",
    "ppo_torch.py": "--no-jit-env",
    "ppo_torch_compile.py": None,
}
SCRIPTS = list(EAGER_FLAG)
JAX_SCRIPTS = ["ppo_linen.py", "ppo_nnx.py", "ppo_nnx_cached.py", "ppo_nnx_tree.py", "ppo_equinox.py"]
JAX_EAGER_SCRIPTS = [script for script in JAX_SCRIPTS if EAGER_FLAG[script]]


def run_script(script: str, *args: str, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run `python script args...` from the repository root in a fresh process."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, script), *args],
        cwd=ROOT, capture_output=True, text=True, env=full_env, timeout=timeout,
    )


def read_run(run_dir: str) -> tuple[dict, dict]:
    """Return ({tag: [(step, value), ...]}, {text tag: markdown}) from the run's event file(s)."""
    scalars, texts = {}, {}
    for path in sorted(glob.glob(os.path.join(run_dir, "events.out.tfevents.*"))):
        for event in EventFileLoader(path).Load():
            for value in event.summary.value:
                if value.metadata.plugin_data.plugin_name == "text":
                    texts[value.tag] = value.tensor.string_val[0].decode()
                else:  # the loader migrates simple_value into a float tensor
                    scalars.setdefault(value.tag, []).append((event.step, value.tensor.float_val[0]))
    return scalars, texts


def table(markdown: str) -> dict:
    """Parse a `|key|value|` markdown table into a dict."""
    rows = [line.strip("|").split("|", 1) for line in markdown.splitlines()[2:]]
    return {key: value for key, value in rows}


def final_return(scalars: dict, last: int = 5) -> float:
    return float(np.mean([value for _, value in scalars["charts/episodic_return"][-last:]]))


def assert_clean_error(result: subprocess.CompletedProcess, log_dir: str, expected: str):
    """Bad input: non-zero exit, one clear stderr line, no traceback, no run folder left behind."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert len(lines) == 1 and expected in lines[0], result.stderr
    assert not os.path.exists(log_dir) or not os.listdir(log_dir)
