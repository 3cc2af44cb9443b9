"""Shared test helpers: run a script in a fresh process (or share one such run), read its TensorBoard event file."""
import ast
import concurrent.futures
import contextlib
import functools
import glob
import heapq
import importlib
import json
import os
import signal
import subprocess
import sys
import threading
from typing import NamedTuple

import numpy as np
import pytest
from ledger import keyed
from matplotlib.figure import Figure
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

from report import charts
from sweep import variants

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the smallest config that still runs every part of the loop: 2 minibatches, 2 epochs
TINY = ["--num-envs", "4", "--num-steps", "16", "--num-minibatches", "2", "--update-epochs", "2"]
ALWAYS_TAGS = {
    "charts/learning_rate", "charts/SPS", "losses/value_loss", "losses/policy_loss", "losses/entropy",
    "losses/approx_kl", "losses/old_approx_kl", "losses/clipfrac", "losses/explained_variance",
    "time/iteration", "time/startup", "time/total", "memory/peak_rss_bytes",
}
SYNC_TAGS = {"time/rollout", "time/update"}
# the flags of each script's shared sync-timing run, which --profile also traces (and must leave the results alone)
SYNC_PROFILED = ("--sync-timing", "--profile")


def profiled(script: str) -> tuple:
    """The flags of the script's shared profiled run: SYNC_PROFILED, or --profile alone where the loop is fused."""
    return ("--profile",) if script in FUSED_SCRIPTS else SYNC_PROFILED


# What a script is comes from the registry of variants (sweep/variants.py): its rows' flags, framework, env backend,
# algorithm and num_seeds; a script's default mode is its row without flags.
def default_row(script: str) -> variants.Variant:
    """The registry row of the script's (a file name's) default mode: the one without flags."""
    return variants.default_row(script[: -len(".py")])


# ppo_linen_pbt.py's agents copy each other and change their hyperparameters as they train (PBT): its runs are not the
# runs of its flags' values that the tests of every script take them for (a learning rate annealed alone, an agent's
# curve its own seed's); tests/test_pbt.py tests it, tests/test_harness.py its harness with its family's
PBT_SCRIPTS = [variants.LINEN_PBT.file]


def registry_scripts(algorithm: str, **fields) -> list:
    """The files of the algorithm's scripts (the registry's order, PBT_SCRIPTS left out) whose default row has the
    fields given."""
    rows = [default_row(f"{script}.py") for script in variants.SCRIPTS]
    return [row.file for row in rows if row.algorithm == algorithm and row.file not in PBT_SCRIPTS
            and all(getattr(row, name) == value for name, value in fields.items())]


def eager_flag(script: str) -> str | None:
    """The flag of the script's eager mode ("none"): its registry row's, or its default row's among the modes no sweep
    runs (tested all the same); None if it has none."""
    flags = [row.flags for row in variants.of_script(script[: -len(".py")]) if row.eager]
    flags += [mode_flags for mode, mode_flags in default_row(script).unswept if mode == "none"]
    assert all(len(mode_flags) == 1 for mode_flags in flags), flags
    return flags[0][0] if flags else None


# every variant and the flag that turns its compilation off (None: the script always compiles, or never does)
EAGER_FLAG = {script: eager_flag(script) for script in registry_scripts(variants.PPO)}
SCRIPTS = list(EAGER_FLAG)
# the compile mode each script's system text names in its default mode (its eager flag's mode is "none")
COMPILE_MODE = {script: default_row(script).mode for script in SCRIPTS}
# the scripts that compile the whole training (lax.scan over iterations): no host fetch per iteration in main(), one
# compiled call per chunk of iterations, no --sync-timing (rollout and update are one call); they train --num-seeds
# agents in one process, each in its own run folder ({run_name}__seed{s} when there are several)
FUSED_SCRIPTS = registry_scripts(variants.PPO, num_seeds=True)
# a fused script's learning run: LEARNING_AGENTS agents (seeds 1 onwards) over the default 100 iterations. Each agent
# leaves ppo_linen.py's trajectory of its seed at float32 rounding (from iteration 8 on, seed 1), so its final return is
# another sample: at 80 iterations seed 1's agent ended at 378 (ppo_linen.py's at 497), at 100 every agent above 420
LEARNING_AGENTS, FUSED_LEARNING_ITERATIONS = 4, 100
# the scripts on Gymnasium (NumPy, CPU) envs: CartPole-v1, Acrobot-v1 and MountainCar-v0 only
GYMNASIUM_SCRIPTS = registry_scripts(variants.PPO, backend=variants.GYMNASIUM)
# the scripts on envs written in torch (no JAX in the process): the same three envs
NATIVE_SCRIPTS = registry_scripts(variants.PPO, backend=variants.TORCH_ENV)
# the DQN scripts (CleanRL's CartPole-v1 DQN: its four designs, then every other framework and compile mode) and the
# compile mode each names by default
DQN_COMPILE_MODE = {script: default_row(script).mode for script in registry_scripts(variants.DQN)}
DQN_SCRIPTS = list(DQN_COMPILE_MODE)
DQN_EAGER_FLAG = {script: flag for script in DQN_SCRIPTS if (flag := eager_flag(script))}  # no sweep runs them
DQN_GYMNASIUM_SCRIPTS = registry_scripts(variants.DQN, backend=variants.GYMNASIUM)  # on Gymnasium (NumPy, CPU) envs
DQN_GYMNAX_SCRIPTS = [script for script in DQN_SCRIPTS if script not in DQN_GYMNASIUM_SCRIPTS]
DQN_TORCH_GYMNAX_SCRIPTS = registry_scripts(variants.DQN, framework="torch", backend=variants.GYMNAX)  # torch agents
# what a script on three envs only says of another env id
ENV_REFUSALS = {**dict.fromkeys(GYMNASIUM_SCRIPTS, "not one of the gymnax envs with a Gymnasium counterpart"),
                **dict.fromkeys(NATIVE_SCRIPTS, "not one of the envs written in torch here"),
                **dict.fromkeys(DQN_GYMNASIUM_SCRIPTS, "not one of the gymnax envs with a Gymnasium counterpart")}
# the scripts that take --network cnn (MinAtar's CNN over the env's frames)
CNN_SCRIPTS = registry_scripts(variants.PPO, cnn=True)
# the scripts that take --env-id module:EnvId (all but those on envs written in torch)
MODULE_ENV_SCRIPTS = [script for script in SCRIPTS if script not in NATIVE_SCRIPTS]
# the scripts that never import torch
JAX_SCRIPTS = [script for script in SCRIPTS if default_row(script).framework != "torch"]
JAX_EAGER_SCRIPTS = [script for script in JAX_SCRIPTS if EAGER_FLAG[script]]
EAGER_SCRIPTS = [script for script in SCRIPTS if EAGER_FLAG[script]]
# the scripts of a family share their env code (make_envs, env_reset, env_step, flatten_obs, unpack_step) line for
# line (test_scripts checks it); the gymnax families run every grid env
FAMILIES = {
    "jax": [script for script in JAX_SCRIPTS if script not in GYMNASIUM_SCRIPTS],
    "torch": [script for script in SCRIPTS if script not in JAX_SCRIPTS + GYMNASIUM_SCRIPTS + NATIVE_SCRIPTS],
    "gymnasium": GYMNASIUM_SCRIPTS,
    "native": NATIVE_SCRIPTS,
}


def runtime(script: str) -> tuple:
    """What a script's process runs beyond the harness, which is the same line for line in every script of a family
    (tests/test_harness.py): its algorithm, the frameworks in the process, what steps the env, and whether the whole
    training is one compiled call. A signal or a diverged loss is checked once per runtime, in its first script."""
    row = default_row(script)
    return row.algorithm, frameworks(script), row.backend, row.num_seeds


# the continuous-action PPO scripts (exp12): Pendulum-v1 by default, Brax in JAX, MuJoCo through Gymnasium
CONTINUOUS_SCRIPTS = registry_scripts(variants.PPO_CONTINUOUS)
CONTINUOUS_GYMNASIUM_SCRIPTS = registry_scripts(variants.PPO_CONTINUOUS, backend=variants.GYMNASIUM)
# their learning run: the default config (8 envs x 256 steps) over CONTINUOUS_LEARNING_ITERATIONS on Pendulum-v1, seed
# 1; the mean of the last 5 episodic returns must reach CONTINUOUS_LEARNED_RETURN (iteration 1, a random policy's,
# returns about -1,375). Measured on an AMD EPYC, seed 1 at 50 iterations: Linen, NNX and the four torch and Gymnasium
# runs -235 to -348, Equinox -807 (its seeds 2-5: -847 to -187 at iteration 50; the reference's -611 to -219): the
# threshold keeps ~20 % of the way from Equinox's to the random policy's for another CPU's float trajectory
CONTINUOUS_LEARNING_ITERATIONS = 50
CONTINUOUS_LEARNED_RETURN = -1000
# a Brax run of the tests: hopper on the spring backend, which compiles in a third of MJX's time (the adapter around
# the Brax env, which the tests check, is the same for every backend), episodes truncated at 8 steps
BRAX_TINY = ["--env-id", "hopper", "--brax-backend", "spring", "--episode-length", "8"]
CONTINUOUS_BAD_COMMAND_LINES = {
    "bad value": (["--learning-rate", "-1", "--log-dir", "{log_dir}"], "--learning-rate must be positive", None),
    "log dir under a file": (["--log-dir", "{file}/runs"], "cannot create the run folder {file}/runs/", None),
    "unknown env": (["--env-id", "NoSuchEnv-v0", "--log-dir", "{log_dir}"], "unknown env", None),
    "unknown Brax env": (["--env-id", "hoper", "--log-dir", "{log_dir}"], "unknown env 'hoper'", None),
    "discrete actions": (["--env-id", "CartPole-v1", "--log-dir", "{log_dir}"], "needs continuous actions", None),
    "batch not divisible": (["--num-minibatches", "7", "--log-dir", "{log_dir}"], "not divisible", None),
    "cnn without frames": (["--network", "cnn", "--log-dir", "{log_dir}"], "--network cnn needs frames", CNN_SCRIPTS),
    "no envs": (["--num-envs", "0", "--log-dir", "{log_dir}"], "--num-envs must be positive", None),
    "no gpu": (["--device", "gpu", "--log-dir", "{log_dir}"], "--device gpu: no such device", None),
}
# the Atari scripts (exp14): the Nature CNN on ale-py's frames, Breakout-v5 by default; their smoke run is TINY
ATARI_SCRIPTS = registry_scripts(variants.PPO_ATARI)
PROBED_SCRIPTS = SCRIPTS + DQN_SCRIPTS + CONTINUOUS_SCRIPTS + ATARI_SCRIPTS  # the CLI probe's: every family's
ATARI_BAD_COMMAND_LINES = {
    "bad value": (["--learning-rate", "-1", "--log-dir", "{log_dir}"], "--learning-rate must be positive", None),
    "log dir under a file": (["--log-dir", "{file}/runs"], "cannot create the run folder {file}/runs/", None),
    "not an Atari game": (["--env-id", "CartPole-v1", "--log-dir", "{log_dir}"], "not an Atari game of this script",
                          None),
    "batch not divisible": (["--num-minibatches", "7", "--log-dir", "{log_dir}"], "not divisible", None),
    "no envs": (["--num-envs", "0", "--log-dir", "{log_dir}"], "--num-envs must be positive", None),
    "no gpu": (["--device", "gpu", "--log-dir", "{log_dir}"], "--device gpu: no such device", None),
}
# the smallest DQN config that runs every part of the loop: 4 iterations of 500 transitions, gradient steps from
# transition 601 (none in iteration 0), target syncs every 100, epsilon down to its end over the first 1,000
DQN_TINY = [
    "--total-timesteps", "2000", "--iteration-steps", "500", "--learning-starts", "600", "--buffer-size", "1000",
    "--batch-size", "32", "--target-network-frequency", "100",
]
DQN_TAGS = {
    "charts/episodic_return", "charts/episodic_length", "charts/epsilon", "charts/SPS", "losses/td_loss",
    "losses/q_values", "time/iteration", "time/startup", "time/total", "memory/peak_rss_bytes",
}
# every value a DQN script's check_args must refuse, and the edges of its ranges (all allowed)
DQN_BAD_VALUES = [
    (["--learning-rate", "0"], "--learning-rate must be positive"),
    (["--learning-rate", "nan"], "--learning-rate must be positive"),
    (["--total-timesteps", "0"], "--total-timesteps must be positive"),
    (["--num-envs", "-1"], "--num-envs must be positive"),
    (["--buffer-size", "0"], "--buffer-size must be positive"),
    (["--batch-size", "0"], "--batch-size must be positive"),
    (["--train-frequency", "0"], "--train-frequency must be positive"),
    (["--target-network-frequency", "0"], "--target-network-frequency must be positive"),
    (["--iteration-steps", "0"], "--iteration-steps must be positive"),
    (["--learning-starts", "-1"], "--learning-starts must be >= 0"),
    (["--gamma", "0"], "--gamma must be in (0, 1]"),
    (["--tau", "1.5"], "--tau must be in (0, 1]"),
    (["--exploration-fraction", "0"], "--exploration-fraction must be in (0, 1]"),
    (["--start-e", "1.5"], "--start-e must be in [0, 1]"),
    (["--end-e", "-0.1"], "--end-e must be in [0, 1]"),
    (["--buffer-size", "64"], "--buffer-size 64 is smaller than one batch (--batch-size 128)"),
    (["--learning-starts", "500000"], "--learning-starts 500000 is not below --total-timesteps 500000"),
    (["--total-timesteps", "15000"], "must be a multiple of --iteration-steps 10000"),
    (["--num-envs", "3"], "and that of --num-envs 3"),
    (["--num-envs", "200", "--buffer-size", "128"], "--buffer-size 128 is smaller than one step's transitions"),
    (["--sync-timing"], "--sync-timing: an iteration"),
]
DQN_BOUNDARY_VALUES = [
    "--gamma", "1", "--tau", "1", "--exploration-fraction", "1", "--start-e", "0", "--end-e", "0", "--learning-starts",
    "0", "--buffer-size", "128", "--num-envs", "125",
]
# the DQN scripts' bad command lines (as BAD_COMMAND_LINES)
DQN_BAD_COMMAND_LINES = {
    "buffer below a batch": (
        ["--buffer-size", "64", "--log-dir", "{log_dir}"], "--buffer-size 64 is smaller than one batch", None,
    ),
    "learning starts beyond the total": (
        ["--learning-starts", "600000", "--log-dir", "{log_dir}"], "is not below --total-timesteps", None,
    ),
    "no envs": (["--num-envs", "0", "--log-dir", "{log_dir}"], "--num-envs must be positive", None),
    "log dir under a file": (["--log-dir", "{file}/runs"], "cannot create the run folder {file}/runs/", None),
    "unknown env": (["--env-id", "NoSuchEnv-v0", "--log-dir", "{log_dir}"], "unknown env", None),
    "env module missing": (
        ["--env-id", "benchback_no_such_module:Env-v0", "--log-dir", "{log_dir}"],
        "No module named 'benchback_no_such_module'", None,
    ),
    "env not in its module": (["--env-id", "doors:NoSuchEnv-v0", "--log-dir", "{log_dir}"],
                              "--env-id doors:NoSuchEnv-v0: ", None),
    "continuous actions": (["--env-id", "Pendulum-v1", "--log-dir", "{log_dir}"], "continuous action space", None),
    "no gpu": (["--device", "gpu", "--log-dir", "{log_dir}"], "--device gpu: no such device", None),
    "cudagraphs on a cpu": (
        ["--cudagraphs", "--device", "cpu", "--log-dir", "{log_dir}"], "--cudagraphs needs a CUDA GPU",
        [variants.DQN_TORCH_COMPILE_CUDAGRAPHS.file],
    ),
}
# the DQN learning run: the default config (epsilon's decay over half of it) in fewer transitions, seed 1; the mean of
# its last 5 iterations' episodic returns must reach DQN_LEARNED_RETURN (a random policy gets ~22). Measured on an AMD
# EPYC, seeds 1-3 of each script (12 runs): at 100,000 transitions min 180, median 270, seed 1 183-428; at 150,000 min
# 281; at the default 500,000 min 461 (CartPole-v1's solved range). The threshold keeps a third below the lowest, for
# another CPU kind's float trajectory
DQN_LEARNING_TIMESTEPS = 100000
DQN_LEARNED_RETURN = 120
# a DQN run at an absurd learning rate: the first gradient step (iteration 1) is finite, the next ones are not
DQN_DIVERGING = [*DQN_TINY[2:], "--total-timesteps", "10000", "--learning-rate", "1e30"]
PROBE = os.path.join(ROOT, "tests", "probe.py")
CLI_PROBE = os.path.join(ROOT, "tests", "cli_probe.py")
# (argv, what the error names): every value check_args must refuse
BAD_VALUES = [
    (["--learning-rate", "0"], "--learning-rate must be positive"),
    (["--learning-rate", "-1"], "--learning-rate must be positive"),
    (["--learning-rate", "nan"], "--learning-rate must be positive"),
    (["--gamma", "0"], "--gamma must be in (0, 1]"),
    (["--gamma", "1.01"], "--gamma must be in (0, 1]"),
    (["--gae-lambda", "-0.5"], "--gae-lambda must be in (0, 1]"),
    (["--gae-lambda", "2"], "--gae-lambda must be in (0, 1]"),
    (["--clip-coef", "0"], "--clip-coef must be positive"),
    (["--ent-coef", "-0.01"], "--ent-coef must be >= 0"),
    (["--vf-coef", "-0.5"], "--vf-coef must be >= 0"),
    (["--max-grad-norm", "0"], "--max-grad-norm must be positive"),
    (["--adam-eps", "-1e-5"], "--adam-eps must be positive"),
    (["--num-envs", "2", "--num-steps", "2", "--num-minibatches", "8"], "minibatch size 0"),
]
# the edges of every range above, all allowed
BOUNDARY_VALUES = ["--gamma", "1", "--gae-lambda", "1", "--ent-coef", "0", "--vf-coef", "0", "--learning-rate", "1e30"]
# name: (argv, what the one error line names, the scripts it applies to or None for all): bad command lines, each run
# as __main__ in the CLI probe's one process (tests/cli_probe.py); "{file}" is a regular file, "{log_dir}" a fresh
# folder; /proc refuses mkdir though os.access lets root (who runs these tests) write there
BAD_COMMAND_LINES = {
    "bad value": (["--learning-rate", "-1", "--log-dir", "{log_dir}"], "--learning-rate must be positive", None),
    "log dir under a file": (["--log-dir", "{file}/runs"], "cannot create the run folder {file}/runs/", None),
    "log dir in proc": (
        ["--log-dir", "/proc/benchback-no-such-folder"], "cannot create the run folder /proc/benchback-no-such-folder/",
        None,
    ),
    "unknown env": (["--env-id", "NoSuchEnv-v0", "--log-dir", "{log_dir}"], "unknown env", None),
    # module:EnvId: a module that is not there, an env its module does not provide (torch's own envs refuse both)
    "env module missing": (
        ["--env-id", "benchback_no_such_module:Env-v0", "--log-dir", "{log_dir}"],
        "No module named 'benchback_no_such_module'", MODULE_ENV_SCRIPTS,
    ),
    "env not in its module": (
        ["--env-id", "doors:NoSuchEnv-v0", "--log-dir", "{log_dir}"], "--env-id doors:NoSuchEnv-v0: ", MODULE_ENV_SCRIPTS,
    ),
    "continuous actions": (
        ["--env-id", "Pendulum-v1", "--log-dir", "{log_dir}"], "continuous action space", None,
    ),
    "batch not divisible": (["--num-minibatches", "7", "--log-dir", "{log_dir}"], "not divisible", None),
    "no envs": (["--num-envs", "0", "--log-dir", "{log_dir}"], "--num-envs must be positive", None),
    "no gpu": (["--device", "gpu", "--log-dir", "{log_dir}"], "--device gpu: no such device", None),
    "cudagraphs on a cpu": (
        ["--cudagraphs", "--device", "cpu", "--log-dir", "{log_dir}"], "--cudagraphs needs a CUDA GPU",
        [variants.TORCH_COMPILE_CUDAGRAPHS.file],
    ),
}
# what the Gymnasium scripts name for a gymnax env id without a Gymnasium counterpart
NO_GYMNASIUM_ENV = ENV_REFUSALS[GYMNASIUM_SCRIPTS[0]]
# the bad command lines that are bad only on a machine without a GPU: not run where there is one
SKIPPED_ON_A_GPU = {"no gpu"}
# the NNX scripts and the mode each pins: graph mode with graph updates (True), or tree mode (False: the scripts whose
# default mode is "tree")
PINNED_MODE = {script: default_row(script).mode != "tree"
               for script in SCRIPTS + DQN_SCRIPTS + CONTINUOUS_SCRIPTS + ATARI_SCRIPTS
               if default_row(script).framework == "nnx"}
# LEARNING RUNS: one per equivalence class runs in the README's test command; a script whose learning follows from its
# class representative's by an equivalence test (parity from identical weights, or "trains alike") has its learning run
# in the learning tier alone: `python -m pytest -m learning` runs one learning run per script (docs/running.md: before
# a reference sitting). {script: (the representative it learns as, the test that proves it, tests/FILE::NAME)}
LEARNS_AS = {
    "ppo_nnx.py": ("ppo_linen.py",
                   "test_parity_nnx.py::test_rollout_and_update_parity_with_linen_from_identical_weights"),
    "ppo_nnx_cached.py": ("ppo_nnx.py",
                          "test_parity_nnx.py::test_cached_partial_parity_with_nnx_jit_over_two_iterations"),
    "ppo_nnx_tree.py": ("ppo_linen.py", "test_parity_nnx_tree.py::"
                        "test_tree_mode_two_iterations_through_jit_partial_match_linen_from_identical_weights"),
    "ppo_equinox.py": ("ppo_linen.py",
                       "test_parity_equinox.py::test_rollout_and_update_parity_with_linen_from_identical_weights"),
    "ppo_linen_scan.py": ("ppo_linen.py",
                          "test_scan.py::test_one_agent_computes_the_losses_and_returns_of_ppo_linen_with_its_seed"),
    "ppo_torch_compile.py": ("ppo_torch.py",
                             "test_parity_torch.py::test_parity_one_minibatch_update_loss_grad_clip_adam_matches_optax"),
    "ppo_torch_gymnasium.py": ("ppo_linen_gymnasium.py",
                               "test_parity_torch.py::test_parity_one_minibatch_update_loss_grad_clip_adam_matches_optax"),
    "dqn_nnx.py": ("dqn_linen.py", "test_dqn.py::test_linen_nnx_and_equinox_train_alike_from_the_same_weights"),
    "dqn_equinox.py": ("dqn_linen.py", "test_dqn.py::test_linen_nnx_and_equinox_train_alike_from_the_same_weights"),
    "dqn_linen_vmap.py": ("dqn_linen.py", "test_dqn_population.py::"
                          "test_each_agent_of_an_hparams_file_computes_what_dqn_linen_computes_with_its_seed_and_values"),
    "dqn_torch_compile.py": ("dqn_torch.py",
                             "test_dqn.py::test_torch_compile_trains_as_eager_torch_from_the_same_seed"),
    "dqn_torch_gymnasium.py": ("dqn_linen_gymnasium.py", "test_dqn.py::"
                               "test_the_gymnasium_pair_shares_its_env_replay_exploration_and_bookkeeping_code_line_for_line"),
    "ppo_continuous_torch_gymnasium.py": ("ppo_continuous_linen_gymnasium.py", "test_continuous_gymnasium.py::"
                                          "test_torch_loss_terms_and_every_gradient_match_the_reference"),
}


# the CNN's (--network cnn): a script's CNN learns as its representative's CNN where the CNN parity test proves the
# network, loss and gradients equal (tests/test_parity_cnn.py) and LEARNS_AS's test the rest of the script
CNN_LEARNS_AS = {script: LEARNS_AS[script] for script in CNN_SCRIPTS if script in LEARNS_AS}


def learning_params(scripts: list, learns_as: dict = LEARNS_AS) -> list:
    """The scripts as the parameters of a learning test: each marked `learning`, and those of `learns_as` also
    `learns_by_equivalence` (left out unless the run selects by marker: tests/conftest.py)."""
    marks = [pytest.mark.learning]
    return [pytest.param(script, marks=marks + [pytest.mark.learns_by_equivalence] * (script in learns_as))
            for script in scripts]


# the learning run: the default config in fewer iterations (the LR still anneals to 0 over them), seed 1, and the mean
# of its last 5 episodic returns must reach LEARNED_RETURN (a random policy gets ~22). Measured on an Intel Xeon, seeds
# 1-5 of every script (45 runs): at 80 iterations min 374, 10th percentile 432, median 496; at 100 min 381. Another
# CPU kind takes another float trajectory (an AMD EPYC ended one run at 357), so the threshold keeps ~20 % below the
# lowest seen anywhere
LEARNING_ITERATIONS = 80
LEARNED_RETURN = 300
# the CNN's learning run: --network cnn on Breakout-MinAtar, the default config in CNN_LEARNING_ITERATIONS iterations,
# seed 1; the mean of its last 5 episodic returns must reach CNN_LEARNED_RETURN. Measured on an AMD EPYC (Zen 5):
# iteration 1 returns 0.4 (the untrained policy); at 15 iterations Linen's seed 1 ends at 2.72, torch's seeds 1-3 at
# 2.96, 2.80 and 2.96 (at 40 iterations torch's seed 1 reaches 5.8): the threshold keeps half the lowest seen
CNN_LEARNING_ITERATIONS = 15
CNN_LEARNED_RETURN = 1.5
# one update per iteration at an absurd learning rate: iteration 1 is finite, iteration 2 is not
DIVERGING = [
    "--num-envs", "4", "--num-steps", "16", "--num-minibatches", "1", "--update-epochs", "1", "--learning-rate", "1e30",
]
EAGER_ITERATIONS = 3  # the probed eager run: iteration 2 must compile nothing that iterations 0 and 1 did not
# XLA's cheapest CPU compile (LLVM unoptimised, XLA's elemental emitters instead of its fusion emitters, which cost
# most of a small program's compile: the same computation, compiled ~30% sooner and executed slower, rounded apart from
# XLA's defaults in the last bits of a float), for the short
# processes whose time is compilation: every script's shared runs but the learning runs (the runs whose numbers a
# test compares all compile alike), and the tools' end-to-end runs (a DQN_TINY run too: it compiles more than it
# executes). The learning runs execute: XLA's defaults (DEFAULT_COMPILE)
FAST_COMPILE = ("--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
                " --xla_cpu_use_fusion_emitters=false")
CHEAP_COMPILE, DEFAULT_COMPILE = {"XLA_FLAGS": FAST_COMPILE}, {"XLA_FLAGS": ""}
VERBOSE_IMPORTS = {"PYTHONVERBOSE": "1"}  # stderr lists every import (the JAX scripts must not import torch)
# every shared run's torch on one intra-op thread: two runs share the two cores (this process's tests and a run in the
# background, or two runs), and torch's default of a thread per core slows both several-fold when they do
ONE_THREAD = {"OMP_NUM_THREADS": "1"}


@functools.cache
def auto_device() -> str:
    """The device `--device auto` picks on this machine: "gpu" where JAX and torch both see a CUDA GPU, else "cpu"."""
    import jax
    import torch

    return "gpu" if torch.cuda.is_available() and jax.default_backend() == "gpu" else "cpu"


def learning_iterations(script: str) -> int:
    return FUSED_LEARNING_ITERATIONS if script in FUSED_SCRIPTS else LEARNING_ITERATIONS


def start_script(script: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    """Start `python script args...` from the repository root in a fresh process."""
    return subprocess.Popen(
        [sys.executable, os.path.join(ROOT, script), *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})},
    )


def finish_script(process: subprocess.Popen, timeout: int) -> subprocess.CompletedProcess:
    """Wait for a started script (killed past `timeout` seconds) and return what it did."""
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def run_script(script: str, *args: str, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run `python script args...` from the repository root in a fresh process."""
    return finish_script(start_script(script, *args, env=env), timeout)


class Run(NamedTuple):
    result: subprocess.CompletedProcess
    run_dir: str
    scalars: dict
    texts: dict
    record: dict | None  # what tests/probe.py recorded, for a probed run


def run_label(key: tuple) -> str:
    """A shared run's key as one line for the ledger (tests/ledger.py): its script, arguments and marks."""
    words = []
    for part in key:
        if isinstance(part, tuple):  # the arguments, or the environment's (name, value) pairs
            words += ["=".join(item) if isinstance(item, tuple) else item for item in part]
        elif part is True:
            words.append("[probe]")
        elif part not in (False, None):
            words.append(str(part))
    text = " ".join(words).replace(" ".join(DQN_TINY), "DQN_TINY").replace(" ".join(TINY), "TINY")
    return text if len(text) <= 110 else text[:107] + "..."


class SharedRuns:
    """Fresh-process runs shared by the whole test session: a run asked for twice (same script, arguments,
    environment variables and probe) runs once, and every test that needs it reads the same logs. Runs can also be
    queued for a background thread, which runs them one at a time, the first in `rank` first (then the first queued),
    so that they overlap with the tests that run meanwhile."""

    def __init__(self, root):
        self.root, self.runs, self.works, self.processes = str(root), {}, {}, set()
        self.background = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self.queue, self.queue_lock, self.rank = [], threading.Lock(), 0

    def future(self, key: tuple, work, background: bool) -> concurrent.futures.Future:
        """The future of `work(folder)` (a fresh folder), done once per `key`: now, or queued in the background. A run
        asked for now that still waits in the background queue is taken out of it and done now (the background thread
        meanwhile keeps the other core busy with the next one): no test waits for a run that has not started. A test
        that asks for a run the background thread is running does the queued runs meanwhile, one at a time, until that
        run is done: no core waits while runs are queued."""
        if key not in self.runs:
            folder = os.path.join(self.root, f"run{len(self.runs)}")
            self.works[key] = keyed(run_label(key), functools.partial(work, folder))
            if background:
                self.runs[key] = concurrent.futures.Future()
                with self.queue_lock:
                    heapq.heappush(self.queue, (self.rank, len(self.runs), key, self.runs[key]))
                self.background.submit(self.run_next_queued)
                return self.runs[key]
        elif background or not self.runs[key].cancel():
            while not background and not self.runs[key].done() and self.run_next_queued():
                pass
            return self.runs[key]
        self.runs[key] = concurrent.futures.Future()
        try:
            self.runs[key].set_result(self.works[key]())
        except Exception as error:  # a timeout: every test that asks for this run fails with it
            self.runs[key].set_exception(error)
        return self.runs[key]

    def run_next_queued(self) -> bool:
        """The queued run first in rank that no test has taken, done in this thread; False if none was left."""
        while True:
            with self.queue_lock:
                if not self.queue:
                    return False
                _, _, key, future = heapq.heappop(self.queue)
            if future.set_running_or_notify_cancel():  # False: a test took it (cancelled it) to run it itself
                break
        try:
            future.set_result(self.works[key]())
        except Exception as error:  # a timeout: every test that asks for this run fails with it
            future.set_exception(error)
        return True

    def get(
        self, script: str, *args: str, probe: bool = False, env: dict | None = None, background: bool = False,
        check: bool = True,
    ) -> Run | None:
        """`python script args` (under tests/probe.py when `probe`), asserted to exit 0 when `check`; with
        `background`, only start it in the background thread (after the runs started there before), for a later
        `get` to return."""
        key = (script, args, probe, tuple(sorted((env or {}).items())))
        work = functools.partial(self.run, script=script, args=args, probe=probe, env=env)
        future = self.future(key, work, background)
        if background:
            return None
        run = future.result()
        assert not check or run.result.returncode == 0, f"{script} {' '.join(args)}: {run.result.stderr[-3000:]}"
        return run

    def run(self, folder, script, args, probe, env):
        out, command = os.path.join(folder, "probe.json"), [script]
        if probe:
            command = [PROBE, out, os.path.join(ROOT, script)]
        process = start_script(*command, *args, "--log-dir", folder, "--run-name", "run",
                               env={**ONE_THREAD, **CHEAP_COMPILE, **(env or {})})
        self.processes.add(process)
        try:
            result = finish_script(process, timeout=1800)
        finally:
            self.processes.discard(process)
        run_dir = os.path.join(folder, "run")
        scalars, texts = read_run(run_dir) if result.returncode == 0 else ({}, {})
        record = None
        if probe and result.returncode == 0:
            with open(out) as file:
                record = json.load(file)
        return Run(result, run_dir, scalars, texts, record)

    def interrupt(self, folder, script, signame, profile):
        """`script` on TINY for 2000 iterations (a DQN script: DQN_TINY's iterations, 2000 of them), sent `signame`
        once it prints its first iteration (with `profile`: run with --profile and sent it in iteration 9, one of the
        profiled 8-10, once it prints iteration 8's line): the result's stdout holds that line (empty if it never
        came), its stderr all the script wrote there."""
        os.makedirs(folder)
        profiling, line_start = (["--profile"], "iteration 9/") if profile else ([], "iteration ")
        with open(os.path.join(folder, "stderr"), "w+") as stderr:
            long_run = [*TINY, "--num-iterations", "2000"]
            if script in DQN_SCRIPTS:
                long_run = [*DQN_TINY[2:], "--total-timesteps", "1000000"]
            process = subprocess.Popen(
                [sys.executable, os.path.join(ROOT, script), *long_run, *profiling,
                 "--log-dir", folder, "--run-name", "run"], cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr, text=True,
                env={**os.environ, **ONE_THREAD, **CHEAP_COMPILE},
            )
            self.processes.add(process)
            try:
                started = next((line for line in process.stdout if line.startswith(line_start)), "")
                process.send_signal(signal.Signals[signame])
                process.communicate(timeout=300)
            finally:
                self.processes.discard(process)
            stderr.seek(0)
            result = subprocess.CompletedProcess(process.args, process.returncode, started, stderr.read())
        return Run(result, os.path.join(folder, "run"), {}, {}, None)

    def job(self, key: tuple, work, background: bool = False):
        """What `work(folder)` returns (a fresh folder), done once per `key` in the session: a job of several processes
        that one test reads, shared so that it can run in the background."""
        future = self.future(key, work, background)
        return None if background else future.result()

    def interrupted(self, script: str, signame: str, profile: bool = False, background: bool = False) -> Run | None:
        """The run of `interrupt`, shared."""
        work = functools.partial(self.interrupt, script=script, signame=signame, profile=profile)
        future = self.future(("interrupted", script, signame, profile), work, background)
        return None if background else future.result()

    def diverged(self, script: str, background: bool = False) -> Run | None:
        """A run at an absurd learning rate (DIVERGING or DQN_DIVERGING, 20 iterations at most), whatever its exit
        status."""
        args = DQN_DIVERGING if script in DQN_SCRIPTS else [*DIVERGING, "--num-iterations", "20"]
        return self.get(script, *args, background=background, check=False)

    def unknown_env(self, script: str, background: bool = False) -> Run | None:
        """The script asked for an env that does not exist (NoSuchEnv-v0), whatever its exit status."""
        return self.get(script, "--env-id", "NoSuchEnv-v0", background=background, check=False)

    def cli(self, background: bool = False) -> dict | None:
        """{script: CliProbe}: every script's bad values, memory helpers, bad command lines (BAD_COMMAND_LINES) and NNX
        mode pin, probed in one process (tests/cli_probe.py), once in the session."""
        future = self.future(("cli",), run_cli_probe, background)
        return None if background else future.result()

    def close(self):
        """Cancel the runs not started yet and stop the running ones."""
        self.background.shutdown(wait=False, cancel_futures=True)
        for process in list(self.processes):
            process.kill()

    def tiny(self, script: str, *args: str, iterations: int = 3, **kwargs) -> Run:
        """A run of the TINY config."""
        return self.get(script, *TINY, "--num-iterations", str(iterations), *args, **kwargs)

    def smoke(self, script: str, background: bool = False) -> Run | None:
        """Each script's one fast run: TINY, CartPole, its default mode, default seed (1), no sync timing, probed."""
        return self.tiny(script, probe=True, env=VERBOSE_IMPORTS, background=background)

    def profiled(self, script: str, background: bool = False) -> Run | None:
        """The profiled run (TINY, the flags of `profiled(script)`), which also times the rollout and update apart."""
        return self.tiny(script, *profiled(script), background=background)

    def eager(self, script: str, background: bool = False) -> Run | None:
        """An eager script's probed eager run (TINY, EAGER_ITERATIONS)."""
        return self.tiny(script, EAGER_FLAG[script], iterations=EAGER_ITERATIONS, probe=True, background=background)

    def other_seed(self, script: str, background: bool = False) -> Run | None:
        """The smoke run's config with seed 2."""
        return self.tiny(script, "--seed", "2", background=background)

    def learning(self, script: str, background: bool = False) -> Run | None:
        """The learning run: the default config with LEARNING_ITERATIONS, seed 1 (a fused script: LEARNING_AGENTS agents,
        seeds 1 onwards, in one process, FUSED_LEARNING_ITERATIONS)."""
        agents = ("--num-seeds", str(LEARNING_AGENTS)) if script in FUSED_SCRIPTS else ()
        args = ("--seed", "1", "--num-iterations", str(learning_iterations(script)), *agents)
        return self.get(script, *args, env=DEFAULT_COMPILE, background=background)


    def cnn_learning(self, script: str, background: bool = False) -> Run | None:
        """The CNN's learning run: --network cnn on Breakout-MinAtar, the default config with CNN_LEARNING_ITERATIONS,
        seed 1."""
        args = ("--network", "cnn", "--env-id", "Breakout-MinAtar", "--seed", "1", "--num-iterations",
                str(CNN_LEARNING_ITERATIONS))
        return self.get(script, *args, env=DEFAULT_COMPILE, background=background)

    def continuous_smoke(self, script: str, background: bool = False) -> Run | None:
        """Each continuous-action script's one fast run: TINY, Pendulum-v1, its default mode, seed 1."""
        return self.tiny(script, background=background)

    def continuous_learning(self, script: str, background: bool = False) -> Run | None:
        """The continuous learning run: the default config over CONTINUOUS_LEARNING_ITERATIONS, seed 1."""
        return self.get(script, "--seed", "1", "--num-iterations", str(CONTINUOUS_LEARNING_ITERATIONS),
                        env=DEFAULT_COMPILE, background=background)

    def atari_smoke(self, script: str, background: bool = False) -> Run | None:
        """Each Atari script's one fast run: TINY, Breakout-v5, its default mode, seed 1."""
        return self.tiny(script, background=background)

    def dqn_smoke(self, script: str, background: bool = False) -> Run | None:
        """Each DQN script's one fast run: DQN_TINY, CartPole, its default mode, seed 1, probed."""
        return self.get(script, *DQN_TINY, probe=True, background=background)

    def dqn_explore(self, script: str, background: bool = False) -> Run | None:
        """DQN_TINY with epsilon 1 throughout (every action random: the network never chooses one), profiled."""
        return self.get(script, *DQN_TINY, "--start-e", "1", "--end-e", "1", "--profile", background=background)

    def dqn_learning(self, script: str, background: bool = False) -> Run | None:
        """The DQN learning run: the default config over DQN_LEARNING_TIMESTEPS, seed 1."""
        return self.get(script, "--total-timesteps", str(DQN_LEARNING_TIMESTEPS), env=DEFAULT_COMPILE,
                        background=background)


class CliProbe(NamedTuple):
    report: dict  # what tests/cli_probe.py reported for the script
    folder: str  # holds "file", a regular file; "runs", the log dir the command lines name, must stay uncreated

    @property
    def log_dir(self) -> str:
        return os.path.join(self.folder, "runs")


def frameworks(script: str) -> str:
    """What the script runs on the device: JAX alone, torch alone (on Gymnasium envs or its own) or both (on gymnax)."""
    row = default_row(script)
    if row.framework != "torch":
        return "jax"
    return "torch+jax" if row.backend == variants.GYMNAX else "torch"


def runtime_scripts(scripts: list) -> list:
    """The first script of each runtime among `scripts`, in their order."""
    firsts = {}
    for script in scripts:
        firsts.setdefault(runtime(script), script)
    return list(firsts.values())


def bad_values(script: str) -> list:
    """The (argv, what the error names) that the script's check_args must refuse."""
    return DQN_BAD_VALUES if script in DQN_SCRIPTS else BAD_VALUES


def command_lines(script: str) -> dict:
    """The bad command lines of the script's algorithm (BAD_COMMAND_LINES, DQN_BAD_COMMAND_LINES,
    CONTINUOUS_BAD_COMMAND_LINES or ATARI_BAD_COMMAND_LINES)."""
    if script in CONTINUOUS_SCRIPTS:
        return CONTINUOUS_BAD_COMMAND_LINES
    if script in ATARI_SCRIPTS:
        return ATARI_BAD_COMMAND_LINES
    return DQN_BAD_COMMAND_LINES if script in DQN_SCRIPTS else BAD_COMMAND_LINES


def bad_command_lines(script: str) -> list[str]:
    """The names of the bad command lines that apply to the script."""
    return [name for name, (_, _, scripts) in command_lines(script).items() if scripts is None or script in scripts]


def run_cli_probe(root: str) -> dict:
    """tests/cli_probe.py over every script (PPO's, DQN's, the continuous and Atari families') in one fresh process,
    their folders under `root`: {script: CliProbe}."""
    cases, folders = {}, {}
    for script in PROBED_SCRIPTS:
        folders[script] = folder = os.path.join(root, script[: -len(".py")])
        os.makedirs(folder)
        with open(os.path.join(folder, "file"), "w") as file:
            file.write("a file, not a folder")
        values = {"file": os.path.join(folder, "file"), "log_dir": os.path.join(folder, "runs")}
        cases[os.path.join(ROOT, script)] = {
            "frameworks": frameworks(script), "bad_argvs": [argv for argv, _ in bad_values(script)],
            "boundary_argv": DQN_BOUNDARY_VALUES if script in DQN_SCRIPTS else BOUNDARY_VALUES,
            "pinned_mode": PINNED_MODE.get(script),
            "command_lines": [
                {"argv": [arg.format(**values) for arg in command_lines(script)[name][0]],
                 "skip_on_gpu": name in SKIPPED_ON_A_GPU}
                for name in bad_command_lines(script)
            ],
        }
    result = subprocess.run([sys.executable, CLI_PROBE], input=json.dumps(cases), cwd=ROOT, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0 and result.stdout, result.stderr[-3000:]
    reports = json.loads(result.stdout)
    return {script: CliProbe(reports[os.path.join(ROOT, script)], folders[script]) for script in PROBED_SCRIPTS}


def import_keeping_flax_config(name: str):
    """Import an NNX script without letting its import-time mode pin (Flax's global config) leak into the rest of the
    pytest process, which imports scripts of both modes: (the module, the flags it pinned)."""
    import flax

    flags = ("nnx_graph_mode", "nnx_graph_updates")
    saved = {flag: getattr(flax.config, flag) for flag in flags}
    module = importlib.import_module(name)
    pinned = {flag: getattr(flax.config, flag) for flag in flags}
    for flag, value in saved.items():
        flax.config.update(flag, value)
    return module, pinned


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


def agent_runs(run_dir: str) -> list[tuple[dict, dict]]:
    """(scalars, texts) of each agent of a run: its own folder, or, for several agents in one process, each agent's
    {run_dir}__seed{s} in seed order."""
    folders = sorted(glob.glob(f"{glob.escape(run_dir)}__seed*"), key=lambda folder: int(folder.rsplit("__seed", 1)[1]))
    return [read_run(folder) for folder in folders or [run_dir]]


def table(markdown: str) -> dict:
    """Parse a `|key|value|` markdown table into a dict."""
    rows = [line.strip()[1:-1].split("|", 1) for line in markdown.splitlines()[2:]]
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


def top_level_sources(script: str) -> dict:
    """The source of each top-level function, class and assignment of a script (a name in ROOT), by name."""
    with open(os.path.join(ROOT, script)) as f:
        source = f.read()
    sources = {}
    for node in ast.parse(source).body:
        names = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [
            target.id for target in getattr(node, "targets", []) if isinstance(target, ast.Name)]
        sources.update({name: ast.get_source_segment(source, node) for name in names})
    return sources


def fake_command_set(monkeypatch, tool) -> list:
    """Fakes every process that a command set's module (tools/exp12.py, tools/exp14.py) starts, and its commit and
    machine: each process exits 0 printing one env-cost line. Returns the list each command is appended to."""
    commands = []
    ended = subprocess.CompletedProcess([], 0, json.dumps({"first_call_seconds": 1.0, "seconds": [0.5]}) + "\n")
    monkeypatch.setattr(tool.subprocess, "run", lambda command, **kwargs: commands.append(command) or ended)
    monkeypatch.setattr(tool, "commit", lambda: "abc1234")
    monkeypatch.setattr(tool, "command_set_machine", lambda: {"machine": "a CPU"})
    return commands


# CHARTS: the reports written in this process draw a chart only where a test reads it (conftest.py's charts_undrawn)
DRAWING = {"savefig": Figure.savefig, "chart_problems": charts.chart_problems}
UNDRAWN = {"savefig": lambda figure, path, *args, **kwargs: open(path, "wb").close(), "chart_problems": lambda _: []}


def draw_charts(patch: pytest.MonkeyPatch, drawing: dict):
    """Through patch, charts saved as drawing says: DRAWING (laid out, rasterised, checked by chart_problems) or UNDRAWN
    (an empty file in the chart's place: the figure's artists made, nothing laid out, nothing checked)."""
    patch.setattr(Figure, "savefig", drawing["savefig"])
    patch.setattr(charts, "chart_problems", drawing["chart_problems"])


@contextlib.contextmanager
def charts_drawn():
    """Within: the charts drawn for real (for a fixture wider than one test whose report a test reads charts of)."""
    with pytest.MonkeyPatch.context() as patch:
        draw_charts(patch, DRAWING)
        yield
