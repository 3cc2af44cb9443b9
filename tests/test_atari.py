"""The Atari scripts (exp14: CleanRL's ppo_atari_envpool.py in each framework, over ale-py's vector env) in fresh
processes: each one's smoke run on Breakout-v5; and, in this process, the env code the family shares line for line
and what it hands the learner: a life lost ends the learner's episode but not the game's, rewards are clipped to
their sign for learning and logged as scored. Their bad input is the CLI probe's (tests/test_robustness.py); their
network, loss and gradients tests/test_parity_atari.py's."""
import numpy as np
import pytest

import ppo_atari_linen
from helpers import ALWAYS_TAGS, ATARI_SCRIPTS, default_row, table, top_level_sources
from sweep import variants

# the env code every Atari script holds: the games, ale-py's vector env with CleanRL's wrappers, reset and step
ENV_CODE = ("ALE_GAMES", "make_envs", "env_reset", "env_step")


# the fast subset runs one Atari smoke run, the cheapest (eager torch: no compilation); the full suite every script's
SMOKE_PARAMS = [script if script == variants.ATARI_TORCH.file else pytest.param(script, marks=pytest.mark.slow)
                for script in ATARI_SCRIPTS]


@pytest.mark.background("atari_smoke")
@pytest.mark.parametrize("script", SMOKE_PARAMS)
def test_smoke_run_on_breakout_logs_every_tag_and_its_compile_mode(script, shared_runs):
    run = shared_runs.atari_smoke(script)
    assert ALWAYS_TAGS <= set(run.scalars)
    assert [step for step, _ in run.scalars["time/iteration"]] == [0, 1, 2]
    assert table(run.texts["system"])["compile_mode"] == default_row(script).mode
    assert table(run.texts["system"])["ale-py"]
    assert table(run.texts["hyperparameters"])["env_id"] == "Breakout-v5"
    assert all(np.isfinite(value) for _, value in run.scalars["losses/policy_loss"])


@pytest.mark.parametrize("script", ATARI_SCRIPTS[1:])
def test_the_env_code_is_the_references_line_for_line(script):
    reference, sources = top_level_sources(ATARI_SCRIPTS[0]), top_level_sources(script)
    for name in ENV_CODE:
        assert sources[name] == reference[name], f"{script}: {name} differs from {ATARI_SCRIPTS[0]}'s"


class ScriptedEnvs:
    """A stand-in for ale-py's vector env of 2 games: each step's rewards, game ends and lives as scripted."""

    def __init__(self, steps: list):
        self.steps = iter(steps)

    def step(self, action):
        reward, terminated, lives = next(self.steps)
        frames = np.full((2, 4, 84, 84), len(action), np.uint8)
        return frames, np.array(reward), np.array(terminated), np.zeros(2, bool), {"lives": np.array(lives)}


def test_a_life_lost_ends_the_learners_episode_not_the_games_and_rewards_are_learnt_by_their_sign():
    """Game 0 loses a life at step 1 and ends at step 2 (the new game starts with 5 lives: no life lost there); game 1
    scores 4 at step 0 and -1 at step 2. The learner's episodes end at steps 1 and 2 of game 0; the games' returns
    count the scores as they are, and only game 0's end."""
    envs = ScriptedEnvs([([0.0, 4.0], [False, False], [3, 5]), ([1.0, 0.0], [False, False], [2, 5]),
                         ([0.0, -1.0], [True, False], [5, 5])])
    lives = np.array([3, 5])
    steps = [ppo_atari_linen.env_step(np.zeros(2, np.int64), envs, lives) for _ in range(3)]
    assert lives.tolist() == [5, 5]
    flags = np.stack([flag for _, flag in steps])  # reward, terminated, truncated, life lost
    assert flags[..., 3].tolist() == [[0, 0], [1, 0], [0, 0]]
    first = np.zeros((2, 4, 84, 84), np.uint8)
    transitions = [(np.zeros(2, np.int32), np.zeros(2), np.zeros(2), frames, flag) for frames, flag in steps]
    storage = ppo_atari_linen.stack_transitions(first, transitions)
    assert np.asarray(storage.dones).tolist() == [[False, False], [True, False], [True, False]]
    assert np.asarray(storage.rewards).tolist() == [[0, 1], [1, 0], [0, -1]]
    stats = ppo_atari_linen.EpisodeStats(np.zeros(2), np.zeros(2, np.int32), 0.0, 0.0, 0.0)
    for _, flag in steps:
        reward, terminated, truncated, _ = flag.T
        stats = ppo_atari_linen.track_episodes(stats, reward, np.logical_or(terminated, truncated))
    assert float(stats.finished_count) == 1 and float(stats.finished_return_sum) == 1.0  # game 0: 0 + 1 + 0
    assert np.asarray(stats.returns).tolist() == [0.0, 3.0]  # game 1 plays on: 4 - 1
