"""Doors: a 15 x 15 gridworld split by a wall with three doors, written twice, in JAX (a gymnax env) and in NumPy (a
Gymnasium env and a NumPy-vectorised vector env): one MDP in two backends, brought to every script as a user brings
their own env, `--env-id doors:Doors-v0` (docs/variants.md, "Bring your own env").

The MDP (what the published description leaves open is fixed here):
- The grid: 15 x 15 cells, each empty (0), the agent (1), wall (2) or the goal (3); the observation is this grid of
  cell states, float32 (15, 15). The wall fills column 7 but for three doors, at three distinct rows drawn uniformly
  at random at each reset (seeded: the env's generator or key). The agent starts at row 7, column 0, the goal is at
  row 7, column 14: every episode the agent must find a door.
- Actions: 0 stay, 1 right, 2 down, 3 left, 4 up; a move into the wall or off the grid leaves the agent where it is.
- Reward: 1 on reaching the goal (the episode terminates); otherwise -0.01 per step, plus 0.1 if the step shortened
  the shortest path to the goal (through the nearest door) and -0.1 if it lengthened it: 0.09, -0.01 or -0.11. The
  shaping is potential-based (the potential -0.1 x the path length, undiscounted), so it leaves the optimal policy
  as it is, and a path length is closed-form (the wall is the only obstacle).
- Truncation: after 100 steps (an optimal episode takes 14 to 28).
"""
import functools
from typing import Any

import gymnasium as gym
import numpy as np

SIZE = 15
WALL_COLUMN = 7
NUM_DOORS = 3
START = (7, 0)  # (row, column)
GOAL = (7, 14)
MAX_STEPS = 100
EMPTY, AGENT, WALL, GOAL_CELL = 0.0, 1.0, 2.0, 3.0
MOVES = np.array([(0, 0), (0, 1), (1, 0), (0, -1), (-1, 0)], np.int32)  # stay, right, down, left, up
REACHED, CLOSER, LEVEL, FARTHER = 1.0, 0.09, -0.01, -0.11  # the rewards


def path_length(xp, row, column, doors):
    """The length of the shortest path from (row, column) to the goal: Manhattan's on the goal's side of the wall or
    in a door, else through the door that makes it shortest. `xp` is numpy or jax.numpy; row and column are arrays
    of any shape, doors has one more axis (the doors)."""
    direct = xp.abs(row - GOAL[0]) + xp.abs(column - GOAL[1])
    via_doors = (xp.abs(row[..., None] - doors) + (WALL_COLUMN - column)[..., None] + xp.abs(doors - GOAL[0])
                 + (GOAL[1] - WALL_COLUMN))
    return xp.where(column >= WALL_COLUMN, direct, via_doors.min(axis=-1))


def reward_of(xp, reached, before, after):
    """The reward of a step between shortest-path lengths `before` and `after`: constants, so that both backends
    give the same float32 bits."""
    shaped = xp.where(after < before, xp.float32(CLOSER), xp.where(after > before, xp.float32(FARTHER),
                                                                  xp.float32(LEVEL)))
    return xp.where(reached, xp.float32(REACHED), shaped).astype(xp.float32)


def blocked(xp, row, column, doors):
    """Whether a cell is off the grid or wall."""
    off = (row < 0) | (row >= SIZE) | (column < 0) | (column >= SIZE)
    wall = (column == WALL_COLUMN) & ~(row[..., None] == doors).any(axis=-1)
    return off | wall


# JAX: a gymnax env, defined on first use, so that a process on the NumPy env never imports JAX (the torch scripts
# on Gymnasium have none)
@functools.cache
def jax_definitions() -> dict:
    """The JAX env's classes: EnvState, EnvParams and Doors (a gymnax Environment)."""
    import jax
    import jax.numpy as jnp
    from flax import struct
    from gymnax.environments import environment, spaces

    @struct.dataclass
    class EnvState(environment.EnvState):
        row: jax.Array
        column: jax.Array
        doors: jax.Array  # (NUM_DOORS,) int32 rows
        time: int

    @struct.dataclass
    class EnvParams(environment.EnvParams):
        max_steps_in_episode: int = MAX_STEPS

    class Doors(environment.Environment[EnvState, EnvParams]):
        """Doors in JAX, as gymnax writes its envs: step_env and reset_env (gymnax's step adds the auto-reset)."""

        def __init__(self):
            super().__init__()
            self.obs_shape = (SIZE, SIZE)

        @property
        def default_params(self) -> EnvParams:
            return EnvParams()

        def step_env(self, key: jax.Array, state: EnvState, action: int | jax.Array,
                     params: EnvParams) -> tuple[jax.Array, EnvState, jax.Array, jax.Array, dict[Any, Any]]:
            move = jnp.asarray(MOVES)[action]
            row, column = state.row + move[0], state.column + move[1]
            stay = blocked(jnp, row, column, state.doors)
            row, column = jnp.where(stay, state.row, row), jnp.where(stay, state.column, column)
            reached = (row == GOAL[0]) & (column == GOAL[1])
            reward = reward_of(jnp, reached, path_length(jnp, state.row, state.column, state.doors),
                               path_length(jnp, row, column, state.doors))
            state = EnvState(row=row, column=column, doors=state.doors, time=state.time + 1)
            return self.get_obs(state), state, reward, reached, {}

        def reset_env(self, key: jax.Array, params: EnvParams) -> tuple[jax.Array, EnvState]:
            doors = jax.random.choice(key, SIZE, (NUM_DOORS,), replace=False).astype(jnp.int32)
            state = EnvState(row=jnp.int32(START[0]), column=jnp.int32(START[1]), doors=doors, time=0)
            return self.get_obs(state), state

        def get_obs(self, state: EnvState, params=None, key=None) -> jax.Array:
            grid = jnp.zeros((SIZE, SIZE), jnp.float32).at[:, WALL_COLUMN].set(WALL)
            grid = grid.at[state.doors, WALL_COLUMN].set(EMPTY).at[GOAL].set(GOAL_CELL)
            return grid.at[state.row, state.column].set(AGENT)

        def is_terminated(self, state: EnvState, params: EnvParams) -> jax.Array:
            return (state.row == GOAL[0]) & (state.column == GOAL[1])

        @property
        def name(self) -> str:
            return "Doors-v0"

        @property
        def num_actions(self) -> int:
            return len(MOVES)

        def action_space(self, params: EnvParams | None = None) -> spaces.Discrete:
            return spaces.Discrete(len(MOVES))

        def observation_space(self, params: EnvParams) -> spaces.Box:
            return spaces.Box(EMPTY, GOAL_CELL, (SIZE, SIZE), jnp.float32)

        def state_space(self, params: EnvParams) -> spaces.Dict:
            return spaces.Dict({"row": spaces.Discrete(SIZE), "column": spaces.Discrete(SIZE),
                                "doors": spaces.Box(0, SIZE - 1, (NUM_DOORS,), jnp.int32),
                                "time": spaces.Discrete(params.max_steps_in_episode)})

    return {"EnvState": EnvState, "EnvParams": EnvParams, "Doors": Doors}


def __getattr__(name: str):
    """`doors.Doors`, `doors.EnvState`, `doors.EnvParams`: the JAX definitions, made on first use."""
    if name in ("Doors", "EnvState", "EnvParams"):
        return jax_definitions()[name]
    raise AttributeError(f"module 'doors' has no attribute '{name}'")


GYMNAX_ENVS = ("Doors-v0",)


def make_gymnax(env_id: str):
    """The JAX env and its params, as gymnax.make returns them: the hook through which the JAX scripts build
    `--env-id doors:Doors-v0`."""
    if env_id not in GYMNAX_ENVS:
        raise ValueError(f"no JAX env '{env_id}' in doors (it has {', '.join(GYMNAX_ENVS)})")
    env = jax_definitions()["Doors"]()
    return env, env.default_params


# NumPy: a Gymnasium env, and all envs in arrays
def draw_doors(rng: np.random.Generator, count: int) -> np.ndarray:
    """`count` sets of NUM_DOORS distinct rows, uniform, int32 (count, NUM_DOORS)."""
    return rng.random((count, SIZE)).argsort(axis=1)[:, :NUM_DOORS].astype(np.int32)


def grids(rows, columns, doors):
    """The observations of envs at these cells with these doors: float32 (envs, SIZE, SIZE)."""
    count = len(rows)
    grid = np.zeros((count, SIZE, SIZE), np.float32)
    grid[:, :, WALL_COLUMN] = WALL
    grid[np.arange(count)[:, None], doors, WALL_COLUMN] = EMPTY
    grid[:, GOAL[0], GOAL[1]] = GOAL_CELL
    grid[np.arange(count), rows, columns] = AGENT
    return grid


def numpy_step(rows, columns, doors, actions):
    """One step of envs in arrays: their new cells, rewards and whether they reached the goal."""
    move = MOVES[actions]
    new_rows, new_columns = rows + move[:, 0], columns + move[:, 1]
    stay = blocked(np, new_rows, new_columns, doors)
    new_rows, new_columns = np.where(stay, rows, new_rows), np.where(stay, columns, new_columns)
    reached = (new_rows == GOAL[0]) & (new_columns == GOAL[1])
    reward = reward_of(np, reached, path_length(np, rows, columns, doors), path_length(np, new_rows, new_columns, doors))
    return new_rows.astype(np.int32), new_columns.astype(np.int32), reward, reached


class DoorsEnv(gym.Env):
    """Doors as a Gymnasium env, stepped in NumPy (the time limit is its own: no TimeLimit wrapper)."""

    metadata = {"render_modes": []}

    def __init__(self, max_steps: int = MAX_STEPS):
        self.max_steps = max_steps
        self.observation_space = gym.spaces.Box(EMPTY, GOAL_CELL, (SIZE, SIZE), np.float32)
        self.action_space = gym.spaces.Discrete(len(MOVES))

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.row, self.column, self.time = np.int32(START[0]), np.int32(START[1]), 0
        self.doors = draw_doors(self.np_random, 1)[0]
        return self.observation(), {}

    def observation(self) -> np.ndarray:
        return grids(np.array([self.row]), np.array([self.column]), self.doors[None])[0]

    def step(self, action):
        rows, columns, reward, reached = numpy_step(np.array([self.row]), np.array([self.column]), self.doors[None],
                                                    np.array([action]))
        self.row, self.column, self.time = rows[0], columns[0], self.time + 1
        return self.observation(), reward[0], bool(reached[0]), self.time >= self.max_steps, {}


class DoorsVectorEnv(gym.vector.VectorEnv):
    """`num_envs` Doors envs in arrays, stepped together in NumPy (as Gymnasium's CartPoleVectorEnv); an ended episode
    is reset within the step that ends it (same-step autoreset), its last observation in info["final_obs"] where
    info["_final_obs"] is set. Its doors come from one generator for all envs (`reset(seed=...)`)."""

    metadata = {"render_modes": [], "autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int = 1, max_steps: int = MAX_STEPS):
        self.num_envs, self.max_steps = num_envs, max_steps
        self.single_observation_space = gym.spaces.Box(EMPTY, GOAL_CELL, (SIZE, SIZE), np.float32)
        self.single_action_space = gym.spaces.Discrete(len(MOVES))
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self._np_random, self._np_random_seed = gym.utils.seeding.np_random(seed)
        self.rows = np.full(self.num_envs, START[0], np.int32)
        self.columns = np.full(self.num_envs, START[1], np.int32)
        self.time = np.zeros(self.num_envs, np.int32)
        self.doors = draw_doors(self.np_random, self.num_envs)
        return grids(self.rows, self.columns, self.doors), {}

    def step(self, actions):
        self.rows, self.columns, reward, terminated = numpy_step(self.rows, self.columns, self.doors,
                                                                 np.asarray(actions))
        self.time += 1
        truncated = self.time >= self.max_steps
        obs = grids(self.rows, self.columns, self.doors)
        ended = terminated | truncated
        if not ended.any():
            return obs, reward, terminated, truncated, {}
        info = {"final_obs": obs.copy(), "_final_obs": ended}
        self.rows[ended], self.columns[ended], self.time[ended] = START[0], START[1], 0
        self.doors[ended] = draw_doors(self.np_random, int(ended.sum()))
        return grids(self.rows, self.columns, self.doors), reward, terminated, truncated, info


gym.register(id="Doors-v0", entry_point=DoorsEnv, vector_entry_point=DoorsVectorEnv)
