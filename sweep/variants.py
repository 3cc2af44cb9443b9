"""The registry of variants: one row per (script, mode), the one place that names a script. The sweep, the report,
the tools and the tests read what a variant is from here: its flags, framework, algorithm, env backend, cost and
memory families (the estimates), chart label and colour, the sibling it is written beside, and its analogue in the
other algorithm. Adding a script to the sweep and the report: the script, its rows here, its tests (docs/extending.md).
"""
from dataclasses import dataclass

PPO, DQN, PPO_CONTINUOUS = "ppo", "dqn", "ppo-continuous"  # PPO_CONTINUOUS: a Gaussian policy
GYMNAX, GYMNASIUM, TORCH_ENV = "gymnax", "Gymnasium", "torch"  # the env backends: JAX, NumPy, envs written in torch
BRAX, MUJOCO = "Brax", "MuJoCo"  # the continuous family's expensive envs: JAX (gymnax and Brax), C (through Gymnasium)


def algorithm_of(script: str) -> str | None:
    """The algorithm of a script (its name without .py, a copy's included), by the family's name prefix: ppo_continuous_
    (a Gaussian policy), dqn_, ppo_; None for any other name."""
    for prefix, algorithm in (("ppo_continuous_", PPO_CONTINUOUS), ("dqn_", DQN), ("ppo_", PPO)):
        if script.startswith(prefix):
            return algorithm
    return None


@dataclass(frozen=True)
class Variant:
    """One (script, mode): how the sweep runs it and what the report and the tools say of it."""

    script: str  # the script's name without .py
    mode: str  # the compile mode it logs (system/compile_mode)
    flags: tuple  # the flags that select the mode (none for the script's default mode)
    framework: str  # what trains the agent: linen, nnx, equinox, torch
    cost: str  # the cost family of the time estimates (sweep/estimate.py PRIOR, GPU_PRIOR, DQN_PRIOR)
    memory: str  # the family of the peak-memory model (sweep/estimate.py MEMORY)
    color: str  # the chart colour of its label: one hue per framework, darker = more compiled
    sibling: str | None = None  # the script it is written beside (its diff shows what the framework changes)
    backend: str = GYMNAX  # what steps the env
    baseline: str | None = None  # the label one step less compiled, same framework, env stepped the same way
    analogue: str | None = None  # the label of the same framework on the same env backend in the other algorithm
    design: str | None = None  # the answer table's row that it fills (one PPO and one DQN variant per row)
    classic_only: bool = False  # runs CartPole-v1, Acrobot-v1 and MountainCar-v0 only
    num_seeds: bool = False  # trains --num-seeds agents in one process (vmapped)
    cnn: bool = False  # takes --network cnn: MinAtar's CNN over the env's frames

    @property
    def algorithm(self) -> str:
        return algorithm_of(self.script)

    @property
    def label(self) -> str:
        """The report's name, e.g. 'linen (jit)', 'dqn_linen (jit)'."""
        return f"{self.script.removeprefix('ppo_')} ({self.mode})"

    @property
    def eager(self) -> bool:
        """Runs op by op (JAX none, torch none): the sweep gives it fewer iterations."""
        return self.mode == "none"

    @property
    def file(self) -> str:
        return f"{self.script}.py"


# The rows in display order (the charts' legends, the tables): PPO by framework, then DQN.
LINEN_NONE = Variant("ppo_linen", "none", ("--no-jit",), "linen", "jax-eager", "jax", "#9ecae1", cnn=True)
LINEN = Variant("ppo_linen", "jit", (), "linen", "jax", "jax", "#2171b5", baseline="linen (none)",
                analogue="dqn_linen (jit)", design="Flax Linen", cnn=True)
NNX_NONE = Variant("ppo_nnx", "none", ("--no-jit",), "nnx", "jax-eager", "jax", "#a1d99b", "ppo_linen", cnn=True)
NNX = Variant("ppo_nnx", "jit", (), "nnx", "jax", "jax", "#41ab5d", "ppo_linen", baseline="nnx (none)", cnn=True)
NNX_CACHED = Variant("ppo_nnx_cached", "cached", (), "nnx", "jax", "jax", "#00441b", "ppo_nnx", baseline="nnx (none)",
                     design="Flax NNX, `cached_partial`", cnn=True)
NNX_TREE = Variant("ppo_nnx_tree", "tree", (), "nnx", "jax", "jax", "#1b9e77", "ppo_nnx", baseline="nnx (none)",
                   design="Flax NNX, tree mode", cnn=True)
EQUINOX_NONE = Variant("ppo_equinox", "none", ("--no-jit",), "equinox", "jax-eager", "jax", "#fbb4b9", "ppo_linen",
                       cnn=True)
EQUINOX = Variant("ppo_equinox", "jit", (), "equinox", "jax", "jax", "#c51b8a", "ppo_linen",
                  baseline="equinox (none)", design="Equinox", cnn=True)
TORCH_NONE = Variant("ppo_torch", "none", ("--no-jit-env",), "torch", "torch-eager", "torch", "#fdae6b", "ppo_linen",
                     cnn=True)
TORCH = Variant("ppo_torch", "env-jit", (), "torch", "torch", "torch", "#e6550d", "ppo_linen", baseline="torch (none)",
                analogue="dqn_torch (env-jit)", design="PyTorch, JAX env", cnn=True)
TORCH_COMPILE = Variant("ppo_torch_compile", "compile", (), "torch", "compile", "torch", "#7f2704", "ppo_torch",
                        baseline="torch (env-jit)", design="torch.compile, JAX env", cnn=True)
TORCH_COMPILE_CUDAGRAPHS = Variant(  # CUDA graphs: GPU only
    "ppo_torch_compile", "compile+cudagraphs", ("--cudagraphs",), "torch", "compile-cudagraphs", "torch", "#756bb1",
    "ppo_torch", baseline="torch_compile (compile)", design="torch.compile + CUDA graphs, JAX env", cnn=True)
# the Gymnasium scripts: a Python loop over env copies; "-vector" Gymnasium's NumPy-vectorised env, "-async" its
# subprocesses
LINEN_GYMNASIUM = Variant("ppo_linen_gymnasium", "jit", (), "linen", "gymnasium", "linen_gymnasium", "#17becf",
                          "ppo_linen", GYMNASIUM, analogue="dqn_linen_gymnasium (jit)", classic_only=True)
LINEN_GYMNASIUM_VECTOR = Variant("ppo_linen_gymnasium", "jit-vector", ("--vectorization", "vector"), "linen",
                                 "gymnasium-vector", "linen_gymnasium", "#0b6e7a", "ppo_linen", GYMNASIUM,
                                 design="Flax Linen, NumPy env", classic_only=True)
TORCH_GYMNASIUM = Variant("ppo_torch_gymnasium", "eager", (), "torch", "gymnasium", "torch_gymnasium", "#8c6d31",
                          "ppo_torch", GYMNASIUM, analogue="dqn_torch_gymnasium (eager)", classic_only=True)
TORCH_GYMNASIUM_VECTOR = Variant("ppo_torch_gymnasium", "eager-vector", ("--vectorization", "vector"), "torch",
                                 "gymnasium-vector", "torch_gymnasium", "#d6a847", "ppo_torch", GYMNASIUM,
                                 design="PyTorch, NumPy env", classic_only=True)
TORCH_GYMNASIUM_ASYNC = Variant("ppo_torch_gymnasium", "eager-async", ("--vectorization", "async"), "torch",
                                "gymnasium", "torch_gymnasium", "#bf812d", "ppo_torch", GYMNASIUM, classic_only=True)
LINEN_GYMNASIUM_ASYNC = Variant("ppo_linen_gymnasium", "jit-async", ("--vectorization", "async"), "linen",
                                "gymnasium", "linen_gymnasium", "#5ab4ac", "ppo_linen", GYMNASIUM, classic_only=True)
LINEN_SCAN = Variant("ppo_linen_scan", "scan", (), "linen", "jax", "jax", "#08306b", "ppo_linen",
                     design="Flax Linen, training in one `lax.scan`", num_seeds=True)
LINEN_PBT = Variant("ppo_linen_pbt", "pbt", (), "linen", "jax", "jax", "#2c7fb8", "ppo_linen_scan",
                    num_seeds=True)  # population-based training of the scan's agents, inside its compiled scan
TORCH_NATIVE = Variant("ppo_torch_native", "eager", (), "torch", "torch-native", "torch_native", "#f16913",
                       "ppo_torch", TORCH_ENV, design="PyTorch, env in torch", classic_only=True)
TORCH_NATIVE_COMPILE = Variant("ppo_torch_native", "compile", ("--compile",), "torch", "torch-native-compile",
                               "torch_native", "#a63603", "ppo_torch", TORCH_ENV, baseline="torch_native (eager)",
                               design="torch.compile, env in torch", classic_only=True)
TORCH_NATIVE_COMPILE_CUDAGRAPHS = Variant(  # CUDA graphs of the compiled rollout step and update: GPU only
    "ppo_torch_native", "compile+cudagraphs", ("--compile", "--cudagraphs"), "torch",
    "torch-native-compile-cudagraphs", "torch_native", "#54278f", "ppo_torch", TORCH_ENV,
    baseline="torch_native (compile)", design="torch.compile + CUDA graphs, env in torch", classic_only=True)
# DQN (CleanRL's CartPole-v1 DQN): three torch designs in three hues (ΔE2000 > 25 between any two); the cost
# families are the scripts' own (sweep/estimate.py DQN_PRIOR)
DQN_TORCH_GYMNASIUM = Variant("dqn_torch_gymnasium", "eager", (), "torch", "dqn-torch-gymnasium",
                              "dqn-torch-gymnasium", "#7a5c1e", "dqn_torch", GYMNASIUM,
                              analogue="torch_gymnasium (eager)", design="PyTorch, NumPy env", classic_only=True)
DQN_LINEN_GYMNASIUM = Variant("dqn_linen_gymnasium", "jit", (), "linen", "dqn-linen-gymnasium", "dqn-jax", "#35978f",
                              "dqn_torch_gymnasium", GYMNASIUM, analogue="linen_gymnasium (jit)",
                              design="Flax Linen, NumPy env", classic_only=True)
DQN_TORCH = Variant("dqn_torch", "env-jit", (), "torch", "dqn-torch", "dqn-torch", "#fd8d3c", "dqn_linen",
                    analogue="torch (env-jit)", design="PyTorch, JAX env")
DQN_LINEN = Variant("dqn_linen", "jit", (), "linen", "dqn-linen", "dqn-jax", "#4292c6", analogue="linen (jit)",
                    design="Flax Linen")
DQN_LINEN_VMAP = Variant("dqn_linen_vmap", "vmap", (), "linen", "dqn-linen", "dqn-jax", "#084c8d", "dqn_linen",
                         num_seeds=True)  # a population: --num-seeds agents, each with its own --hparams values
DQN_TORCH_COMPILE = Variant("dqn_torch_compile", "compile", (), "torch", "dqn-torch-compile", "dqn-torch", "#a50f15",
                            "dqn_torch", design="torch.compile, JAX env")
DQN_TORCH_COMPILE_CUDAGRAPHS = Variant("dqn_torch_compile", "compile+cudagraphs", ("--cudagraphs",), "torch",
                                       "dqn-torch-compile-cudagraphs", "dqn-torch", "#9e9ac8", "dqn_torch")
DQN_NNX = Variant("dqn_nnx", "tree", (), "nnx", "dqn-nnx", "dqn-jax", "#238b45", "dqn_linen",
                  design="Flax NNX, tree mode")
DQN_EQUINOX = Variant("dqn_equinox", "jit", (), "equinox", "dqn-equinox", "dqn-jax", "#ae017e", "dqn_linen",
                      design="Equinox")
# PPO for continuous actions (CleanRL's ppo_continuous_action.py): gymnax's Pendulum-v1 and Brax in JAX, MuJoCo's C
# engine through Gymnasium; the PPO rows' hues, lighter
CONTINUOUS_LINEN = Variant("ppo_continuous_linen", "jit", (), "linen", "continuous-jax", "continuous-jax", "#6baed6",
                           design="Flax Linen")
CONTINUOUS_NNX = Variant("ppo_continuous_nnx", "tree", (), "nnx", "continuous-jax", "continuous-jax", "#74c476",
                         "ppo_continuous_linen", design="Flax NNX, tree mode")
CONTINUOUS_EQUINOX = Variant("ppo_continuous_equinox", "jit", (), "equinox", "continuous-jax", "continuous-jax",
                             "#f768a1", "ppo_continuous_linen", design="Equinox")
CONTINUOUS_TORCH = Variant("ppo_continuous_torch", "env-jit", (), "torch", "continuous-torch", "continuous-torch",
                           "#f4a582", "ppo_continuous_linen", design="PyTorch, JAX env")
CONTINUOUS_TORCH_COMPILE = Variant("ppo_continuous_torch", "compile", ("--compile",), "torch", "continuous-torch",
                                   "continuous-torch", "#8c2d04", "ppo_continuous_linen",
                                   baseline="continuous_torch (env-jit)", design="torch.compile, JAX env")
CONTINUOUS_TORCH_GYMNASIUM = Variant("ppo_continuous_torch_gymnasium", "eager", (), "torch", "continuous-gymnasium",
                                     "continuous-torch", "#dfc27d", "ppo_continuous_torch", GYMNASIUM,
                                     design="PyTorch, NumPy env")
CONTINUOUS_LINEN_GYMNASIUM = Variant("ppo_continuous_linen_gymnasium", "jit", (), "linen", "continuous-gymnasium",
                                     "continuous-jax", "#80cdc1", "ppo_continuous_linen", GYMNASIUM,
                                     design="Flax Linen, NumPy env")

VARIANTS = (LINEN_NONE, LINEN, NNX_NONE, NNX, NNX_CACHED, NNX_TREE, EQUINOX_NONE, EQUINOX, TORCH_NONE, TORCH,
            TORCH_COMPILE, TORCH_COMPILE_CUDAGRAPHS, LINEN_GYMNASIUM, LINEN_GYMNASIUM_VECTOR, TORCH_GYMNASIUM,
            TORCH_GYMNASIUM_VECTOR, TORCH_GYMNASIUM_ASYNC, LINEN_GYMNASIUM_ASYNC, LINEN_SCAN, LINEN_PBT, TORCH_NATIVE,
            TORCH_NATIVE_COMPILE, TORCH_NATIVE_COMPILE_CUDAGRAPHS, DQN_TORCH_GYMNASIUM, DQN_LINEN_GYMNASIUM, DQN_TORCH, DQN_LINEN, DQN_TORCH_COMPILE,
            DQN_TORCH_COMPILE_CUDAGRAPHS, DQN_NNX, DQN_EQUINOX, DQN_LINEN_VMAP, CONTINUOUS_LINEN, CONTINUOUS_NNX,
            CONTINUOUS_EQUINOX, CONTINUOUS_TORCH, CONTINUOUS_TORCH_COMPILE, CONTINUOUS_TORCH_GYMNASIUM,
            CONTINUOUS_LINEN_GYMNASIUM)
# the variants whose whole iteration is compiled (the ranking's), the published study's three first
FULLY_COMPILED = (LINEN, NNX_CACHED, TORCH_COMPILE, NNX_TREE, EQUINOX, TORCH_COMPILE_CUDAGRAPHS)
BY_KEY = {(variant.script, variant.mode): variant for variant in VARIANTS}
BY_LABEL = {variant.label: variant for variant in VARIANTS}
SCRIPTS = tuple(dict.fromkeys(variant.script for variant in VARIANTS))  # every script, each family's reference first


def variant(script: str, mode: str) -> Variant:
    """The row of (script, mode); KeyError for a pair the registry lacks."""
    return BY_KEY[script, mode]


def of_script(script: str) -> tuple:
    """The rows of one script, in display order."""
    return tuple(row for row in VARIANTS if row.script == script)
