"""The runs of a sweep: the workload every run shares, the selection (--repeats, --only, --filter, --shard), each run's
name and command, and the dry run's lines."""
import json
import re
from dataclasses import asdict, dataclass
from typing import NamedTuple

from sweep import experiments
from sweep.experiments import Config

# bash's `printf %q` escapes these anywhere, `~` at a word's start or after = or :, `#` at a word's start
SHELL_SPECIAL = set(" \t\n'\"\\|&;()<>!{}*[?]^$`,")
# POSIX bracket classes of --filter's extended regular expressions, as Python's re spells them
POSIX_CLASSES = {"[:digit:]": r"0-9", "[:alpha:]": r"a-zA-Z", "[:alnum:]": r"a-zA-Z0-9", "[:upper:]": r"A-Z",
                 "[:lower:]": r"a-z", "[:space:]": r"\s", "[:punct:]": r"!-/:-@\[-`{-~", "[:xdigit:]": r"0-9A-Fa-f"}


def shell_quote(word: str) -> str:
    """`word` quoted as bash's `printf %q` quotes it (its dry-run lines are compared with recorded ones)."""
    if not word:
        return "''"
    if not word.isprintable():
        escaped = word.encode("unicode_escape").decode().replace("'", "\\'")
        return f"$'{escaped}'"
    return "".join("\\" + c if c in SHELL_SPECIAL or (c == "~" and (i == 0 or word[i - 1] in "=:"))
                   or (c == "#" and i == 0) else c for i, c in enumerate(word))


def shell_line(words) -> str:
    return " ".join(map(shell_quote, words))


def filter_regex(pattern: str) -> re.Pattern:
    """--filter's POSIX extended regular expression as a Python pattern; re.error where it is invalid."""
    for posix, python in POSIX_CLASSES.items():
        pattern = pattern.replace(posix, python)
    return re.compile(pattern)


class DqnWorkload(NamedTuple):
    """An exp8 DQN run's workload, as its command passes it."""

    total_timesteps: int  # transitions, all envs'
    iteration_steps: int  # transitions per iteration
    learning_starts: int  # transitions before the first gradient step
    buffer_size: int  # the replay memory, in transitions


@dataclass(frozen=True)
class Workload:
    """The work of every run: iterations (eager runs, exp5's and exp7's large runs their own) and the per-iteration
    workload, and exp8's DQN workloads (a MinAtar env's its own); workload.json records it, and a sweep folder holds
    runs of one workload only."""

    iterations: int
    eager_iterations: int
    num_envs: int
    num_steps: int
    update_epochs: int
    num_minibatches: int
    exp5_iterations: int
    exp5_num_envs: tuple
    exp7_large_iterations: int
    dqn_total_timesteps: int  # exp8's DQN runs (a DqnWorkload): transitions, per iteration, learning starts, memory
    dqn_iteration_steps: int
    dqn_learning_starts: int
    dqn_buffer_size: int
    dqn_minatar_total_timesteps: int  # the same on a MinAtar env
    dqn_minatar_iteration_steps: int
    dqn_minatar_learning_starts: int
    dqn_minatar_buffer_size: int

    @classmethod
    def of(cls, quick, iterations=None, eager_iterations=None, exp5_iterations=None, exp7_large_iterations=None,
           grid="default"):
        """The workload of the options: --quick's smaller one, the iterations given or their defaults (the eager
        runs' and exp7's large runs' never more than --iterations; --grid gpu: GPU_ITERATIONS, its numbers of envs
        and its DQN workload); --quick has no MinAtar DQN run, so its MinAtar DQN workload is the full grid's."""
        gpu = grid == "gpu"
        iterations = iterations or (experiments.QUICK_ITERATIONS if quick else experiments.GPU_ITERATIONS if gpu
                                    else experiments.DEFAULT_ITERATIONS)
        dqn = experiments.QUICK_DQN_WORKLOAD if quick else experiments.GPU_DQN_WORKLOAD if gpu else \
            experiments.DQN_WORKLOAD
        exp5_num_envs = experiments.QUICK_EXP5_NUM_ENVS if quick else experiments.EXP5_NUM_ENVS
        if gpu:
            exp5_num_envs = experiments.QUICK_EXP5_NUM_ENVS[:2] if quick else experiments.GPU_EXP5_NUM_ENVS
        num_envs, num_steps, epochs, minibatches = experiments.QUICK_WORKLOAD if quick else \
            experiments.REFERENCE_WORKLOAD
        return cls(iterations, eager_iterations or min(iterations, experiments.DEFAULT_EAGER_ITERATIONS), num_envs,
                   num_steps, epochs, minibatches, exp5_iterations or experiments.DEFAULT_EXP5_ITERATIONS,
                   exp5_num_envs,
                   exp7_large_iterations or min(iterations, experiments.DEFAULT_EXP7_LARGE_ITERATIONS),
                   *dqn, *experiments.DQN_MINATAR_WORKLOAD)

    def dqn(self, env: str) -> DqnWorkload:
        """The DQN workload of an exp8 run on env: a MinAtar env's own (experiments.dqn_minatar)."""
        prefix = "dqn_minatar_" if experiments.dqn_minatar(env) else "dqn_"
        return DqnWorkload(*(getattr(self, prefix + name) for name in DqnWorkload._fields))

    def json(self) -> str:
        """workload.json's one line."""
        return json.dumps({**asdict(self), "exp5_num_envs": list(self.exp5_num_envs)})

    def accepts(self, recorded: dict) -> bool:
        """Whether a folder's recorded workload is this one: the same, or the same from before exp5 (or exp7, or exp8,
        or exp8's replay memory and MinAtar runs) joined the grid (such a folder holds none of their runs, and gains
        their fields; its exp8 runs had the scripts' default replay memory, DQN_WORKLOAD's)."""
        mine = json.loads(self.json())
        before_minatar = {key: value for key, value in mine.items()
                          if key != "dqn_buffer_size" and not key.startswith("dqn_minatar_")}
        before_exp8 = {key: value for key, value in before_minatar.items() if not key.startswith("dqn_")}
        before_exp7 = {key: value for key, value in before_exp8.items() if key != "exp7_large_iterations"}
        before_exp5 = {key: value for key, value in before_exp7.items() if not key.startswith("exp5_")}
        return recorded in (mine, before_minatar, before_exp8, before_exp7, before_exp5)

    def num_steps_of(self, config: Config) -> int:
        """A PPO run's steps per env per iteration: exp9's keep the reference batch at any number of envs."""
        if config.exp == "exp9":
            return self.num_envs * self.num_steps // config.num_envs
        return self.num_steps

    def iterations_of(self, config: Config) -> int:
        if experiments.dqn(config):
            dqn = self.dqn(config.env)
            return dqn.total_timesteps // dqn.iteration_steps
        if config.exp == "exp5":
            return self.exp5_iterations
        if config.exp == "exp7" and config.size == "large":
            return self.exp7_large_iterations
        return self.eager_iterations if config.eager else self.iterations


@dataclass(frozen=True)
class Run:
    """One selected run (exp6: one group): its configuration, seed (a group's first agent's) and place in the grid."""

    config: Config
    seed: int
    index: int  # its position in the whole grid, repeats included

    @property
    def name(self) -> str:
        """<exp>__<script>__<mode>__<env>__<size>[__n<N>][__a<N>][__sync]__<seed>: exp5, 8, 9 carry their N, exp6
        its number of agents, the synchronised runs of exp5 and exp7 "sync" (the other experiments have one timing)."""
        c = self.config
        parts = [c.exp, c.script, c.mode, c.env, c.size]
        parts += [f"n{c.num_envs}"] * (c.exp in ("exp5", "exp8", "exp9")) + [f"a{c.agents}"] * (c.exp == "exp6")
        parts += ["sync"] * (c.exp in ("exp5", "exp7") and c.timing == "sync")
        return "__".join(parts + [str(self.seed)])

    @property
    def seeds(self) -> range:
        return range(self.seed, self.seed + self.config.agents)


def config_of(name: str, num_envs: int) -> Config:
    """The configuration a run name stands for (the per-iteration number of envs, but exp5's, from the workload)."""
    fields = name.split("__")
    exp, script, mode, env, size = fields[:5]
    if exp in ("exp5", "exp8", "exp9"):
        return Config(exp, script, mode, env, size, int(fields[5][1:]), "sync" if len(fields) == 8 else "async")
    if exp == "exp6":
        return Config(exp, script, mode, env, size, num_envs, "async", int(fields[5][1:]))
    timing = "sync" if exp in ("exp2", "exp3") or (exp == "exp7" and len(fields) == 7) else "async"
    return Config(exp, script, mode, env, size, num_envs, timing)


def command(run: Run, workload: Workload, python: str, out: str, agent=None) -> list:
    """The argv of a run; in an exp6 group of one process per agent, of agent `agent` (a seed, or a range like "1..8"
    in a dry-run line)."""
    c = run.config
    argv = [python, f"{c.script}.py", *experiments.MODE_FLAGS.get((c.script, c.mode), ())]
    argv += ["--env-id", c.env, "--model-size", c.size, "--seed", str(run.seed if agent is None else agent)]
    if experiments.dqn(c):  # the DQN workload of its env
        dqn = workload.dqn(c.env)
        argv += ["--num-envs", str(c.num_envs), "--total-timesteps", str(dqn.total_timesteps), "--iteration-steps",
                 str(dqn.iteration_steps), "--learning-starts", str(dqn.learning_starts), "--buffer-size",
                 str(dqn.buffer_size)]
        return argv + ["--log-dir", f"{out}/runs/{c.exp}", "--run-name", run.name]
    argv += ["--num-seeds", str(c.agents)] * (c.mode == "scan") + ["--sync-timing"] * (c.timing == "sync")
    argv += ["--num-iterations", str(workload.iterations_of(c)), "--num-envs", str(c.num_envs), "--num-steps",
             str(workload.num_steps_of(c)), "--update-epochs", str(workload.update_epochs), "--num-minibatches",
             str(workload.num_minibatches)]
    log_dir, run_name = f"{out}/runs/{c.exp}", run.name
    if c.exp == "exp6":  # the agents' run folders in the group's: agent__seed<s> (the scan script adds __seed<s>)
        log_dir += f"/{run.name}"
        run_name = "agent" if c.mode == "scan" and c.agents > 1 else f"agent__seed{run.seed if agent is None else agent}"
    return argv + ["--log-dir", log_dir, "--run-name", run_name]


def at_a_time(config: Config, parallel: int) -> int:
    """How many of an exp6 group's processes run at a time."""
    return min(config.agents, parallel)


def dry_run_line(run: Run, workload: Workload, python: str, out: str, parallel: int) -> str:
    """"<index> <exp> <command>"; an exp6 group of processes "<index> exp6 <N> x <command>, <P> at a time", its seed
    and run name the range of its agents'."""
    c = run.config
    if not c.processes:
        return f"{run.index} {c.exp} {shell_line(command(run, workload, python, out))}"
    seeds = f"{run.seed}..{run.seeds[-1]}" if c.agents > 1 else str(run.seed)
    line = shell_line(command(run, workload, python, out, seeds))
    return f"{run.index} exp6 {c.agents} x {line}, {at_a_time(c, parallel)} at a time"


def describe(run: Run, workload: Workload, parallel: int) -> str:
    """The progress line's words for a run or group, e.g. "exp5 ppo_linen jit CartPole-v1 small 8 envs sync seed 1,
    12 iterations"."""
    c = run.config
    what, seed = f"{c.exp} {c.script} {c.mode} {c.env} {c.size}", str(run.seed)
    if c.exp in ("exp5", "exp8", "exp9"):
        what += f" {c.num_envs} env{'s' * (c.num_envs > 1)}" + " sync" * (c.timing == "sync")
    elif c.exp == "exp7" and c.timing == "sync":
        what += " sync"
    elif c.exp == "exp6":
        processes = f"{c.agents} processes, {at_a_time(c, parallel)} at a time" if c.processes and c.agents > 1 \
            else "1 process"
        what += f" {c.agents} agents" if c.agents > 1 else " 1 agent"
        seed += f"..{run.seeds[-1]}" * (c.agents > 1)
        what += f" ({processes})"
    return f"{what} seed {seed}, {workload.iterations_of(c)} iterations"


def select(grid, repeats, min_seeds, only=None, pattern=None, shard=(1, 1)):
    """The runs of the grid that the options select, in order: --repeats times the grid with seeds 1.. (a configuration
    at least min_seeds(config) times: exp7's small async runs, exp8's; exp6's groups seeds 1 + 1000 r onwards), then
    --only (the warm-up runs stay), --filter on the run's name, --shard K/N of the runs but the warm-up runs, which go
    to every shard."""
    selected, index, position = [], 0, 0
    for repeat in range(max([repeats, *map(min_seeds, grid)])):
        for config in grid:
            if repeat >= repeats and repeat >= min_seeds(config):
                continue
            index += 1
            if only and config.exp not in (only, "warmup"):
                continue
            seed = 1 + repeat * (experiments.EXP6_SEED_STRIDE if config.exp == "exp6" else 1)
            run = Run(config, seed, index)
            if pattern and not pattern.search(run.name):
                continue
            if config.exp != "warmup":
                position += 1
                if (position - 1) % shard[1] != shard[0] - 1:
                    continue
            selected.append(run)
    return selected
