"""The grids (--grid): which experiments' runs each holds, in which order, and the seeds each configuration runs at
least. study and default run every experiment's runs in the experiments' order; gpu holds the runs that answer most
per GPU minute, in the priority order of its parts (a)-(h) (docs/running.md: the windows' plan)."""
from typing import Callable, NamedTuple

from sweep import variants as v
from sweep.experiments import ALL, EXP5, EXP6, EXP7, EXP8, EXP12, EXP14, WARMUP, product

GRIDS = ("study", "default", "gpu")


class GpuPart(NamedTuple):
    """A part of --grid gpu's priority order: its letter, what it answers (docs/running.md's windows' plan) and its
    runs."""
    letter: str
    answers: str
    runs: Callable


def warmup_and_graphs(choices):
    """The warm-up run (torch env-jit: imports JAX and torch, initialises CUDA under both), then the ranking's
    CUDA-graph runs."""
    return product(WARMUP.name, ("CartPole-v1",), ("small",), (v.TORCH,), choices.num_envs) + EXP7.gpu_graph_runs(
        choices)


# --grid gpu, the runs that answer most per GPU minute in priority order, so that a sitting cut short (benchmark.sh
# --max-minutes, one chunk per device command) still answers the first question. Existing experiments' names and run
# names, so that the report reads a GPU sweep as a CPU one and --compare pairs them.
GPU_PARTS = (
    GpuPart("a", "torch at its GPU best (CUDA graphs) beside Linen, with the warm-up run", warmup_and_graphs),
    GpuPart("b", "seeds 2 and 3: intervals for the GPU answer", EXP7.gpu_seed_runs),
    GpuPart("c", f"{EXP5.name}: the number of envs, up to 65,536", EXP5.gpu_runs),
    GpuPart("d", f"{EXP6.name}: many agents on one GPU (a search's populations)", EXP6.gpu_runs),
    GpuPart("e", f"{EXP8.name}: DQN", EXP8.gpu_runs),
    GpuPart("f", f"{EXP14.name}: convolutional agents (MinAtar's CNN, the Nature CNN)", EXP14.gpu_runs),
    GpuPart("g", f"{EXP7.name}: the rest of the ranking per model size", EXP7.gpu_runs),
    GpuPart("h", f"{EXP12.name}: continuous control on Brax's envs", EXP12.gpu_runs),
)


def gpu_grid(choices):
    """--grid gpu: GPU_PARTS's runs, in their order."""
    return [config for part in GPU_PARTS for config in part.runs(choices)]


def min_seeds(config, choices):
    """The seeds a configuration runs at least, whatever --repeats (--grid gpu: every run once, one seed per GPU
    minute)."""
    return 1 if choices.grid == "gpu" else config.experiment.min_seeds(config, choices)


def build_grid(choices):
    """Every configuration of the grid, in run order (--grid gpu: gpu_grid's priority order)."""
    if choices.grid == "gpu":
        return gpu_grid(choices)
    return [config for experiment in ALL for config in experiment.runs(choices)]
