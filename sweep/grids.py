"""The grids (--grid): which experiments' runs each holds, in which order, and the seeds each configuration runs at
least. study and default run every experiment's runs in the experiments' order; gpu holds the runs that answer most
per GPU minute, in the priority order of its parts (a)-(h) (docs/running.md: the windows' plan); reference the
README's CPU columns, existing experiments' runs re-sized, every run at REFERENCE_SEEDS seeds, in its parts' order
(docs/running.md: the reference sitting). --only takes an experiment or one of SELECTIONS, a grid's parts."""
from typing import Callable, NamedTuple

from sweep import variants as v
from sweep.experiments import ALL, EXP1, EXP5, EXP6, EXP7, EXP8, EXP12, EXP14, WARMUP, product

GRIDS = ("study", "default", "gpu", "reference")
REFERENCE_SEEDS = 3


class Part(NamedTuple):
    """A part of a grid's order (--grid gpu, --grid reference): its letter, what it answers (docs/running.md's tables
    of the parts) and its runs."""
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
    Part("a", "torch at its GPU best (CUDA graphs) beside Linen, with the warm-up run", warmup_and_graphs),
    Part("b", "seeds 2 and 3: intervals for the GPU answer", EXP7.gpu_seed_runs),
    Part("c", f"{EXP5.name}: the number of envs, up to 65,536", EXP5.gpu_runs),
    Part("d", f"{EXP6.name}: many agents on one GPU (a search's populations)", EXP6.gpu_runs),
    Part("e", f"{EXP8.name}: DQN", EXP8.gpu_runs),
    Part("f", f"{EXP14.name}: convolutional agents (MinAtar's CNN, the Nature CNN)", EXP14.gpu_runs),
    Part("g", f"{EXP7.name}: the rest of the ranking per model size", EXP7.gpu_runs),
    Part("h", f"{EXP12.name}: continuous control on Brax's envs", EXP12.gpu_runs),
)


# --grid reference, the README's CPU columns in one sitting: the small model and DQN first (the columns that
# SELECTIONS["generation"] runs alone on a CPU of another generation), then the number of envs, continuous control and
# the published study's comparison, the large model last (the longest runs)
REFERENCE_PARTS = (
    Part("a", "the warm-up runs", WARMUP.runs),
    Part("b", f"{EXP7.name}: the small model", lambda choices: EXP7.reference_runs(choices, "small")),
    Part("c", f"{EXP8.name}: DQN on CartPole-v1", EXP8.reference_runs),
    Part("d", f"{EXP5.name}: 8 and 2,048 envs", EXP5.reference_runs),
    Part("e", f"{EXP12.name}: continuous control on hopper (Brax) and Hopper-v5 (MuJoCo)", EXP12.reference_runs),
    Part("f", f"{EXP1.name}: the published study's comparison at small, its 12 envs", EXP1.reference_runs),
    Part("g", f"{EXP7.name}: the large model (the study's comparison at large too)",
         lambda choices: EXP7.reference_runs(choices, "large")),
)
PARTS = {"gpu": GPU_PARTS, "reference": REFERENCE_PARTS}
# --only's selections of a grid's parts: (the grid, the letters of its parts)
SELECTIONS = {"generation": ("reference", ("a", "b", "c"))}


def parts_grid(parts, choices):
    """A grid of parts: their runs, in their order."""
    return [config for part in parts for config in part.runs(choices)]


def min_seeds(config, choices):
    """The seeds a configuration runs at least, whatever --repeats (--grid gpu: every run once, one seed per GPU
    minute; --grid reference: REFERENCE_SEEDS, but the runs that prepare the machine, once)."""
    if choices.grid == "reference" and not config.experiment.prepares:
        return REFERENCE_SEEDS
    return 1 if choices.grid == "gpu" else config.experiment.min_seeds(config, choices)


def build_grid(choices):
    """Every configuration of the grid, in run order (a grid of parts: its parts' order)."""
    if choices.grid in PARTS:
        return parts_grid(PARTS[choices.grid], choices)
    return [config for experiment in ALL for config in experiment.runs(choices)]


def kept(only, choices):
    """--only's test of a configuration: of the experiment named, or of the parts of the selection named (None: every
    configuration)."""
    if not only:
        return None
    if only not in SELECTIONS:
        return lambda config: config.exp == only
    grid, letters = SELECTIONS[only]
    configs = {config for part in PARTS[grid] if part.letter in letters for config in part.runs(choices)}
    return configs.__contains__
