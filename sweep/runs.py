"""The runs of a sweep: the selection (--repeats, --only, --filter, --shard), each run's name and command, and the dry
run's lines."""
from dataclasses import dataclass

from sweep.experiments import BY_NAME, Config
from sweep.shell import shell_line
from sweep.workload import Workload

@dataclass(frozen=True)
class Run:
    """One selected run (of a grouped experiment: one group): its configuration, seed (a group's first agent's) and
    place in the grid."""

    config: Config
    seed: int
    index: int  # its position in the whole grid, repeats included

    @property
    def name(self) -> str:
        """<exp>__<script>__<mode>__<env>__<size>[__n<N>][__a<N>][__sync]__<seed>: what its experiment's names carry
        (the number of envs, the number of agents of a group, "sync" for the synchronised runs of an experiment of
        both timings)."""
        c = self.config
        carries = c.experiment.carries
        parts = [c.exp, c.script, c.mode, c.env, c.size]
        parts += [f"n{c.num_envs}"] * ("num_envs" in carries) + [f"a{c.agents}"] * ("agents" in carries)
        parts += ["sync"] * ("sync" in carries and c.timing == "sync")
        return "__".join(parts + [str(self.seed)])

    @property
    def seeds(self) -> range:
        return range(self.seed, self.seed + self.config.agents)


def config_of(name: str, num_envs: int) -> Config:
    """The configuration a run name stands for (the number of envs, where the name does not carry it, from the
    workload)."""
    fields = name.split("__")
    exp, script, mode, env, size = fields[:5]
    carried = fields[5:-1]
    num_envs = next((int(field[1:]) for field in carried if field.startswith("n")), num_envs)
    agents = next((int(field[1:]) for field in carried if field.startswith("a")), 1)
    return Config(exp, script, mode, env, size, num_envs, BY_NAME[exp].timing_of(carried), agents)


def command(run: Run, workload: Workload, python: str, out: str, agent=None) -> list:
    """The argv of a run; in a group of one process per agent, of agent `agent` (a seed, or a range like "1..8" in a
    dry-run line)."""
    c = run.config
    argv = [python, c.variant.file, *c.variant.flags]
    argv += ["--env-id", c.env, *c.experiment.network_flags(c), "--model-size", c.size, "--seed",
             str(run.seed if agent is None else agent)]
    if c.dqn:  # the DQN workload of its env
        dqn = workload.dqn(c.env)
        argv += ["--num-envs", str(c.num_envs), "--total-timesteps", str(dqn.total_timesteps), "--iteration-steps",
                 str(dqn.iteration_steps), "--learning-starts", str(dqn.learning_starts), "--buffer-size",
                 str(dqn.buffer_size)]
        return argv + ["--log-dir", f"{out}/runs/{c.exp}", "--run-name", run.name]
    argv += ["--num-seeds", str(c.agents)] * c.variant.num_seeds + ["--sync-timing"] * (c.timing == "sync")
    update_epochs, num_minibatches = workload.update_of(c)
    argv += ["--num-iterations", str(workload.iterations_of(c)), "--num-envs", str(c.num_envs), "--num-steps",
             str(workload.num_steps_of(c)), "--update-epochs", str(update_epochs), "--num-minibatches",
             str(num_minibatches)]
    log_dir, run_name = f"{out}/runs/{c.exp}", run.name
    if c.grouped:  # the agents' run folders in the group's: agent__seed<s> (the vmapped script adds __seed<s>)
        log_dir += f"/{run.name}"
        vmapped = c.variant.num_seeds and c.agents > 1
        run_name = "agent" if vmapped else f"agent__seed{run.seed if agent is None else agent}"
    return argv + ["--log-dir", log_dir, "--run-name", run_name]


def at_a_time(config: Config, parallel: int) -> int:
    """How many of a group's processes run at a time."""
    return min(config.agents, parallel)


def dry_run_line(run: Run, workload: Workload, python: str, out: str, parallel: int) -> str:
    """"<index> <exp> <command>"; a group of processes "<index> <exp> <N> x <command>, <P> at a time", its seed and
    run name the range of its agents'."""
    c = run.config
    if not c.processes:
        return f"{run.index} {c.exp} {shell_line(command(run, workload, python, out))}"
    seeds = f"{run.seed}..{run.seeds[-1]}" if c.agents > 1 else str(run.seed)
    line = shell_line(command(run, workload, python, out, seeds))
    return f"{run.index} {c.exp} {c.agents} x {line}, {at_a_time(c, parallel)} at a time"


def describe(run: Run, workload: Workload, parallel: int) -> str:
    """The progress line's words for a run or group: "<exp> <script> <mode> <env> <size>", what its name carries
    ("8 envs", "sync", a group's agents and processes), its seed and iterations."""
    c = run.config
    carries = c.experiment.carries
    what, seed = f"{c.exp} {c.script} {c.mode} {c.env} {c.size}", str(run.seed)
    what += f" {c.num_envs} env{'s' * (c.num_envs > 1)}" * ("num_envs" in carries)
    what += " sync" * ("sync" in carries and c.timing == "sync")
    if c.grouped:
        processes = f"{c.agents} processes, {at_a_time(c, parallel)} at a time" if c.processes and c.agents > 1 \
            else "1 process"
        what += f" {c.agents} agents" if c.agents > 1 else " 1 agent"
        seed += f"..{run.seeds[-1]}" * (c.agents > 1)
        what += f" ({processes})"
    return f"{what} seed {seed}, {workload.iterations_of(c)} iterations"


def select(grid, repeats, min_seeds, kept=None, pattern=None, shard=(1, 1)):
    """The runs of the grid that the options select, in order: --repeats times the grid with seeds 1.. (a configuration
    at least min_seeds(config) times; a group's agents seeds 1 + seed_stride r onwards; a configuration of a pinned
    seed once, where the grid puts it, and not again in a repeat), then --only (kept: its test of a configuration,
    grids.kept; the runs that prepare the machine stay), --filter on the run's name, --shard K/N of the runs but those
    that prepare the machine, which go to every shard."""
    selected, index, position = [], 0, 0
    pinned = {Run(config, config.seed, 0).name for config in grid if config.seed}
    for repeat in range(max([repeats, *map(min_seeds, grid)])):
        for config in grid:
            if repeat >= repeats and repeat >= min_seeds(config) or (config.seed and repeat):
                continue
            seed = config.seed or 1 + repeat * config.experiment.seed_stride
            if not config.seed and Run(config, seed, 0).name in pinned:  # a repeat's run that the grid pins already
                continue
            index += 1
            prepares = config.experiment.prepares
            if kept and not kept(config) and not prepares:
                continue
            run = Run(config, seed, index)
            if pattern and not pattern.search(run.name):
                continue
            if not prepares:
                position += 1
                if (position - 1) % shard[1] != shard[0] - 1:
                    continue
            selected.append(run)
    return selected
