"""Doors (doors.py): the JAX env and the NumPy envs are one MDP. Both are stepped from the same states with the same
actions, through goals and truncations, and give the same observations, rewards and flags; the shaping's path length
is the grid's true shortest path; resets draw three distinct doors; the NumPy process never imports JAX."""
import collections
import subprocess
import sys

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import doors

ENV, PARAMS = doors.make_gymnax("Doors-v0")
STEP = jax.jit(ENV.step_env)
RIGHT, DOWN, LEFT, UP, STAY = 1, 2, 3, 4, 0


def jax_state(row, column, door_rows, time=0):
    return doors.EnvState(row=jnp.int32(row), column=jnp.int32(column), doors=jnp.asarray(door_rows, jnp.int32),
                          time=time)


def numpy_env(row, column, door_rows, time=0):
    env = doors.DoorsEnv()
    env.reset(seed=0)
    env.row, env.column, env.doors, env.time = np.int32(row), np.int32(column), np.asarray(door_rows, np.int32), time
    return env


def free_cells(door_rows):
    return [(r, c) for r in range(doors.SIZE) for c in range(doors.SIZE) if c != doors.WALL_COLUMN or r in door_rows]


def bfs_lengths(door_rows):
    """Shortest-path lengths to the goal over the grid's free cells, by breadth-first search."""
    free, lengths, queue = set(free_cells(door_rows)), {doors.GOAL: 0}, collections.deque([doors.GOAL])
    while queue:
        row, column = queue.popleft()
        for dr, dc in doors.MOVES[1:]:
            cell = (row + dr, column + dc)
            if cell in free and cell not in lengths:
                lengths[cell] = lengths[row, column] + 1
                queue.append(cell)
    return lengths


@pytest.mark.parametrize("door_rows", [(0, 7, 14), (3, 4, 11), (12, 13, 14)])
def test_the_shaping_path_length_is_the_grids_shortest_path_in_both_backends(door_rows):
    lengths = bfs_lengths(door_rows)
    cells = np.array(sorted(lengths))
    expected = np.array([lengths[tuple(cell)] for cell in cells])
    rows, columns = cells[:, 0], cells[:, 1]
    door_array = np.broadcast_to(np.array(door_rows), (len(cells), 3))
    assert (doors.path_length(np, rows, columns, door_array) == expected).all()
    assert (np.asarray(doors.path_length(jnp, jnp.asarray(rows), jnp.asarray(columns), jnp.asarray(door_array)))
            == expected).all()


def test_from_the_same_states_and_actions_both_backends_give_the_same_observation_reward_and_flags():
    rng = np.random.default_rng(0)
    checked = collections.Counter()
    for _ in range(400):
        door_rows = rng.permutation(doors.SIZE)[:3]
        cells = free_cells(door_rows)
        row, column = cells[rng.integers(len(cells))]
        if (row, column) == doors.GOAL:
            continue
        time, action = int(rng.integers(doors.MAX_STEPS)), int(rng.integers(5))
        obs, state, reward, terminated, _ = STEP(jax.random.PRNGKey(0), jax_state(row, column, door_rows, time),
                                                 action, PARAMS)
        truncated = ENV.is_truncated(state, PARAMS)
        env = numpy_env(row, column, door_rows, time)
        np_obs, np_reward, np_terminated, np_truncated, _ = env.step(action)
        assert np.array_equal(np.asarray(obs), np_obs) and np_obs.dtype == np.float32
        assert np.float32(reward).tobytes() == np.float32(np_reward).tobytes()
        assert (bool(terminated), bool(truncated)) == (np_terminated, np_truncated)
        checked[float(np_reward)] += 1
        checked["truncated"] += np_truncated
    # every kind of step was met: closer, farther, level (stay or bump), the goal, the time limit
    assert {0.09, -0.11, -0.01} <= {round(key, 2) for key in checked if key != "truncated"}
    assert checked["truncated"] > 0


def run_episode(actions, door_rows):
    """Both backends through whole episodes of `actions` from the start with these doors, gymnax's step (auto-reset)
    against the vector env's (same-step reset): each step's reward and flags, and the observation where no episode
    ended (the reset draws doors from each backend's own generator)."""
    state = jax_state(*doors.START, door_rows)
    vector = doors.DoorsVectorEnv(1)
    vector.reset(seed=0)
    vector.doors[0] = door_rows
    step = jax.jit(ENV.step)
    records = []
    for action in actions:
        obs, state, reward, terminated, truncated, info = step(jax.random.PRNGKey(1), state, action, PARAMS)
        np_obs, np_reward, np_terminated, np_truncated, np_info = vector.step(np.array([action]))
        ended = bool(terminated or truncated)
        final = np.asarray(info["final_observation"]) if ended else np.asarray(obs)
        assert np.array_equal(final, np_info["final_obs"][0] if ended else np_obs[0])
        assert (float(reward), bool(terminated), bool(truncated)) == (float(np_reward[0]), np_terminated[0],
                                                                      np_truncated[0])
        records.append((float(np_reward[0]), bool(np_terminated[0]), bool(np_truncated[0])))
        if ended:  # the next episode from the same doors in both
            state = jax_state(*doors.START, door_rows)
            vector.doors[0] = door_rows
    return records


def test_an_episode_through_a_door_to_the_goal_and_one_to_the_time_limit_are_the_same_in_both_backends():
    # door at row 4: up 3, right 14 (through the door), down 3 reaches the goal at (7, 14) in 20 steps, shortest
    path = [UP] * 3 + [RIGHT] * 14 + [DOWN] * 3
    records = run_episode(path + [LEFT, STAY] * 50, (0, 4, 14))
    assert records[19] == (1.0, True, False) and not any(done for _, done, _ in records[:19])
    assert all(abs(reward - 0.09) < 1e-6 for reward, _, _ in records[:19])  # every step of a shortest path
    assert records[20 + 99][2] and not any(truncated for _, _, truncated in records[20:119])  # 100 steps, truncated


def test_resets_draw_three_distinct_doors_in_range_in_both_backends():
    keys = jax.random.split(jax.random.PRNGKey(3), 200)
    jax_doors = np.asarray(jax.vmap(lambda key: ENV.reset_env(key, PARAMS)[1].doors)(keys))
    vector = doors.DoorsVectorEnv(200)
    vector.reset(seed=3)
    for drawn in (jax_doors, vector.doors):
        assert drawn.shape == (200, 3) and drawn.min() >= 0 and drawn.max() < doors.SIZE
        assert all(len(set(row)) == 3 for row in drawn.tolist())
        assert len(np.unique(drawn)) == doors.SIZE  # every row is drawn as a door somewhere
    obs, _ = vector.reset(seed=3)
    assert (obs[:, doors.START[0], doors.START[1]] == doors.AGENT).all() and obs.shape == (200, 15, 15)


def test_gymnasiums_make_and_make_vec_build_doors_from_module_colon_id_and_seed_it():
    env = gym.make("doors:Doors-v0")
    first, _ = env.reset(seed=5)
    again, _ = env.reset(seed=5)
    assert np.array_equal(first, again) and env.action_space.n == 5
    vector = gym.make_vec("doors:Doors-v0", num_envs=3, vectorization_mode="vector_entry_point")
    assert vector.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    assert vector.reset(seed=1)[0].shape == (3, 15, 15)


def test_the_numpy_env_does_not_import_jax():
    code = ("import sys, gymnasium as gym; env = gym.make('doors:Doors-v0'); env.reset(seed=0); env.step(1); "
            "print('jax' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=doors.__file__.rsplit(
        "/", 1)[0], timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "False", result.stderr


def test_an_unknown_jax_env_of_the_module_is_one_clear_error():
    with pytest.raises(ValueError, match="no JAX env 'Doors-v9' in doors"):
        doors.make_gymnax("Doors-v9")
