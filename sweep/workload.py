"""The work of every run of a sweep: the per-iteration PPO workload, the iterations, and the DQN workloads;
workload.json records it, and a sweep folder holds runs of one workload only."""
import json
from dataclasses import asdict, dataclass
from typing import NamedTuple

from sweep.experiments import EXP5, EXP7, Config, dqn_minatar

# The scripts' defaults, every one passed explicitly to every run. --quick runs 10 iterations, enough to fill the
# windows that plot.py reads (0, 1-7, 8-99), of a smaller workload (batch 32 x 32, 2 epochs x 4 minibatches): quick
# numbers are a smoke test, not results.
DEFAULT_ITERATIONS = 100
DEFAULT_EAGER_ITERATIONS = 10  # eager modes (JAX none, torch none): about a minute per iteration on a 2-core CPU
REFERENCE_WORKLOAD = (32, 256, 10, 8)  # num_envs num_steps update_epochs num_minibatches
QUICK_ITERATIONS = 10
QUICK_WORKLOAD = (32, 32, 2, 4)
# a DQN run's transitions, transitions per iteration, transitions before the first gradient step and replay memory
# (--buffer-size) in transitions; every other hyperparameter the scripts' defaults. CleanRL's CartPole-v1 workload:
# 500,000 in 50 iterations of 10,000 (windows 0, 1-7 and 8-49; iteration 0 all learning-starts), a replay memory of
# 10,000; --quick 10 iterations of 2,000. On a MinAtar env 200,000 in 20 iterations of 10,000 (windows 0, 1-7 and
# 8-19) and a replay memory of 100,000 (of observations 100 x CartPole's: 320 MB, see estimate.MEMORY)
DQN_WORKLOAD = (500000, 10000, 10000, 10000)
DQN_MINATAR_WORKLOAD = (200000, 10000, 10000, 100000)
QUICK_DQN_WORKLOAD = (20000, 2000, 2000, 10000)
# --grid gpu: every PPO run GPU_ITERATIONS iterations (large and the number of envs: 12, as on the CPU): a GPU
# iteration takes milliseconds (JAX) to a second (torch), and the fixed costs (start-up, compilation) dominate a run
GPU_ITERATIONS = 16
# 30,000 transitions in 10 iterations of 3,000 (iteration 0 the learning starts; windows 0, 1-7, 8-9): torch's
# step on a GPU is bound by launches, about a millisecond per transition
GPU_DQN_WORKLOAD = (30000, 3000, 3000, 10000)
# --grid reference: its small runs keep the reference 100 iterations (the published study's totals); its runs of the
# large model, of the number of envs and of continuous control REFERENCE_SHORT_ITERATIONS (windows 0, 1-7 and 8-10:
# a steady median of 3), its DQN runs 200,000 transitions in 20 iterations of 10,000 (windows 0, 1-7 and 8-19)
REFERENCE_SHORT_ITERATIONS = 11
REFERENCE_DQN_WORKLOAD = (200000, 10000, 10000, 10000)


class DqnWorkload(NamedTuple):
    """A DQN run's workload, as its command passes it."""

    total_timesteps: int  # transitions, all envs'
    iteration_steps: int  # transitions per iteration
    learning_starts: int  # transitions before the first gradient step
    buffer_size: int  # the replay memory, in transitions


@dataclass(frozen=True)
class Workload:
    """The work of every run: iterations (eager runs, and the experiments that set their own) and the per-iteration
    workload, and the DQN workloads (a MinAtar env's its own). The field names are workload.json's."""

    iterations: int
    eager_iterations: int
    num_envs: int
    num_steps: int
    update_epochs: int
    num_minibatches: int
    exp5_iterations: int
    exp5_num_envs: tuple
    exp7_large_iterations: int
    exp12_iterations: int  # the continuous-control runs in --grid gpu and --grid reference
    dqn_total_timesteps: int  # the DQN runs (a DqnWorkload): transitions, per iteration, learning starts, memory
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
        runs' and the large model's never more than --iterations; --grid gpu: GPU_ITERATIONS, its numbers of envs
        and its DQN workload; --grid reference: REFERENCE_SHORT_ITERATIONS where not given and its DQN workload);
        --quick has no MinAtar DQN run, so its MinAtar DQN workload is the full grid's."""
        gpu, reference = grid == "gpu", grid == "reference"
        iterations = iterations or (QUICK_ITERATIONS if quick else GPU_ITERATIONS if gpu else DEFAULT_ITERATIONS)
        dqn = QUICK_DQN_WORKLOAD if quick else GPU_DQN_WORKLOAD if gpu else REFERENCE_DQN_WORKLOAD if reference \
            else DQN_WORKLOAD
        short = min(iterations, REFERENCE_SHORT_ITERATIONS) if reference else None
        exp5_num_envs = EXP5.QUICK_NUM_ENVS if quick else EXP5.NUM_ENVS
        if gpu:
            exp5_num_envs = EXP5.QUICK_NUM_ENVS[:2] if quick else EXP5.GPU_NUM_ENVS
        num_envs, num_steps, epochs, minibatches = QUICK_WORKLOAD if quick else REFERENCE_WORKLOAD
        return cls(iterations, eager_iterations or min(iterations, DEFAULT_EAGER_ITERATIONS), num_envs, num_steps,
                   epochs, minibatches, exp5_iterations or short or EXP5.ITERATIONS, exp5_num_envs,
                   exp7_large_iterations or short or min(iterations, EXP7.LARGE_ITERATIONS), short or iterations, *dqn,
                   *DQN_MINATAR_WORKLOAD)

    def dqn(self, env: str) -> DqnWorkload:
        """The DQN workload of a run on env: a MinAtar env's own."""
        prefix = "dqn_minatar_" if dqn_minatar(env) else "dqn_"
        return DqnWorkload(*(getattr(self, prefix + name) for name in DqnWorkload._fields))

    def json(self) -> str:
        """workload.json's one line."""
        return json.dumps({**asdict(self), "exp5_num_envs": list(self.exp5_num_envs)})

    def accepts(self, recorded: dict) -> bool:
        """Whether a folder's recorded workload is this one: the same, or the same from before the number of envs (or
        the model sizes, or DQN, or DQN's replay memory and MinAtar runs, or the continuous-control runs' own iterations) joined the grid
        (such a folder holds none of their runs, and gains their fields; its DQN runs had the scripts' default replay
        memory, DQN_WORKLOAD's; its continuous-control runs, --grid gpu's, had the iterations of every run)."""
        mine = json.loads(self.json())
        before_exp12 = {key: value for key, value in mine.items() if key != "exp12_iterations"}
        before_minatar = {key: value for key, value in before_exp12.items()
                          if key != "dqn_buffer_size" and not key.startswith("dqn_minatar_")}
        before_dqn = {key: value for key, value in before_minatar.items() if not key.startswith("dqn_")}
        before_sizes = {key: value for key, value in before_dqn.items() if key != "exp7_large_iterations"}
        before_num_envs = {key: value for key, value in before_sizes.items() if not key.startswith("exp5_")}
        return recorded in (mine, before_exp12, before_minatar, before_dqn, before_sizes, before_num_envs)

    def num_steps_of(self, config: Config) -> int:
        """A PPO run's steps per env per iteration."""
        return config.experiment.num_steps(config, self)

    def update_of(self, config: Config) -> tuple:
        """A PPO run's epochs and minibatches per update."""
        return config.experiment.update_of(config, self)

    def iterations_of(self, config: Config) -> int:
        if config.dqn:
            dqn = self.dqn(config.env)
            return dqn.total_timesteps // dqn.iteration_steps
        return config.experiment.iterations(config, self)
