"""The registry of variants: one row per (script, mode), the one place that names a script. The sweep, the report,
the tools and the tests read what a variant is from here: its flags, framework, algorithm, env backend, cost and
memory families (the estimates), chart label and colour, the sibling it is written beside, and its analogue in the
other algorithm. Adding a script to the sweep and the report: the script, its rows here, its tests (docs/extending.md).
"""
from dataclasses import dataclass

PPO, DQN, PPO_CONTINUOUS = "ppo", "dqn", "ppo-continuous"  # PPO_CONTINUOUS: a Gaussian policy
PPO_ATARI = "ppo-atari"  # the Nature CNN on Atari frames
GYMNAX, GYMNASIUM, TORCH_ENV = "gymnax", "Gymnasium", "torch"  # the env backends: JAX, NumPy, envs written in torch
ALE = "ALE"  # the Atari family's env: ale-py's vector env, the games emulated in C++
BRAX, MUJOCO = "Brax", "MuJoCo"  # the continuous family's expensive envs: JAX (gymnax and Brax), C (through Gymnasium)


def algorithm_of(script: str) -> str | None:
    """The algorithm of a script (its name without .py, a copy's included), by the family's name prefix: ppo_continuous_
    (a Gaussian policy), ppo_atari_ (the Nature CNN on Atari frames), dqn_, ppo_; None for any other name."""
    for prefix, algorithm in (("ppo_continuous_", PPO_CONTINUOUS), ("ppo_atari_", PPO_ATARI), ("dqn_", DQN),
                              ("ppo_", PPO)):
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


# The rows in display order (the charts' legends, the tables; VARIANTS below is every row, in the order written): PPO by
# framework, then DQN, written with keywords (no look-alike positional strings). A new row is one definition here.
LINEN_NONE = Variant(script="ppo_linen", mode="none", flags=("--no-jit",), framework="linen", cost="jax-eager",
                     memory="jax", color="#9ecae1", cnn=True)
LINEN = Variant(script="ppo_linen", mode="jit", flags=(), framework="linen", cost="jax", memory="jax", color="#2171b5",
                baseline="linen (none)", analogue="dqn_linen (jit)", design="Flax Linen", cnn=True)
NNX_NONE = Variant(script="ppo_nnx", mode="none", flags=("--no-jit",), framework="nnx", cost="jax-eager", memory="jax",
                   color="#a1d99b", sibling="ppo_linen", cnn=True)
NNX = Variant(script="ppo_nnx", mode="jit", flags=(), framework="nnx", cost="jax", memory="jax", color="#41ab5d",
              sibling="ppo_linen", baseline="nnx (none)", cnn=True)
NNX_CACHED = Variant(script="ppo_nnx_cached", mode="cached", flags=(), framework="nnx", cost="jax", memory="jax",
                     color="#00441b", sibling="ppo_nnx", baseline="nnx (none)", design="Flax NNX, `cached_partial`",
                     cnn=True)
NNX_TREE = Variant(script="ppo_nnx_tree", mode="tree", flags=(), framework="nnx", cost="jax", memory="jax",
                   color="#1b9e77", sibling="ppo_nnx", baseline="nnx (none)", design="Flax NNX, tree mode", cnn=True)
EQUINOX_NONE = Variant(script="ppo_equinox", mode="none", flags=("--no-jit",), framework="equinox", cost="jax-eager",
                       memory="jax", color="#fbb4b9", sibling="ppo_linen", cnn=True)
EQUINOX = Variant(script="ppo_equinox", mode="jit", flags=(), framework="equinox", cost="jax", memory="jax",
                  color="#c51b8a", sibling="ppo_linen", baseline="equinox (none)", design="Equinox", cnn=True)
TORCH_NONE = Variant(script="ppo_torch", mode="none", flags=("--no-jit-env",), framework="torch", cost="torch-eager",
                     memory="torch", color="#fdae6b", sibling="ppo_linen", cnn=True)
TORCH = Variant(script="ppo_torch", mode="env-jit", flags=(), framework="torch", cost="torch", memory="torch",
                color="#e6550d", sibling="ppo_linen", baseline="torch (none)", analogue="dqn_torch (env-jit)",
                design="PyTorch, JAX env", cnn=True)
TORCH_COMPILE = Variant(script="ppo_torch_compile", mode="compile", flags=(), framework="torch", cost="compile",
                        memory="torch", color="#7f2704", sibling="ppo_torch", baseline="torch (env-jit)",
                        design="torch.compile, JAX env", cnn=True)
# CUDA graphs: GPU only
TORCH_COMPILE_CUDAGRAPHS = Variant(script="ppo_torch_compile", mode="compile+cudagraphs", flags=("--cudagraphs",),
                                   framework="torch", cost="compile-cudagraphs", memory="torch", color="#756bb1",
                                   sibling="ppo_torch", baseline="torch_compile (compile)",
                                   design="torch.compile + CUDA graphs, JAX env", cnn=True)
# the Gymnasium scripts: a Python loop over env copies; "-vector" Gymnasium's NumPy-vectorised env, "-async" its
# subprocesses
LINEN_GYMNASIUM = Variant(script="ppo_linen_gymnasium", mode="jit", flags=(), framework="linen", cost="gymnasium",
                          memory="linen_gymnasium", color="#17becf", sibling="ppo_linen", backend=GYMNASIUM,
                          analogue="dqn_linen_gymnasium (jit)", classic_only=True)
LINEN_GYMNASIUM_VECTOR = Variant(script="ppo_linen_gymnasium", mode="jit-vector", flags=("--vectorization", "vector"),
                                 framework="linen", cost="gymnasium-vector", memory="linen_gymnasium", color="#0b6e7a",
                                 sibling="ppo_linen", backend=GYMNASIUM, design="Flax Linen, NumPy env",
                                 classic_only=True)
TORCH_GYMNASIUM = Variant(script="ppo_torch_gymnasium", mode="eager", flags=(), framework="torch", cost="gymnasium",
                          memory="torch_gymnasium", color="#8c6d31", sibling="ppo_torch", backend=GYMNASIUM,
                          analogue="dqn_torch_gymnasium (eager)", classic_only=True)
TORCH_GYMNASIUM_VECTOR = Variant(script="ppo_torch_gymnasium", mode="eager-vector", flags=("--vectorization", "vector"),
                                 framework="torch", cost="gymnasium-vector", memory="torch_gymnasium", color="#d6a847",
                                 sibling="ppo_torch", backend=GYMNASIUM, design="PyTorch, NumPy env", classic_only=True)
TORCH_GYMNASIUM_ASYNC = Variant(script="ppo_torch_gymnasium", mode="eager-async", flags=("--vectorization", "async"),
                                framework="torch", cost="gymnasium", memory="torch_gymnasium", color="#bf812d",
                                sibling="ppo_torch", backend=GYMNASIUM, classic_only=True)
LINEN_GYMNASIUM_ASYNC = Variant(script="ppo_linen_gymnasium", mode="jit-async", flags=("--vectorization", "async"),
                                framework="linen", cost="gymnasium", memory="linen_gymnasium", color="#5ab4ac",
                                sibling="ppo_linen", backend=GYMNASIUM, classic_only=True)
LINEN_SCAN = Variant(script="ppo_linen_scan", mode="scan", flags=(), framework="linen", cost="jax", memory="jax",
                     color="#08306b", sibling="ppo_linen", design="Flax Linen, training in one `lax.scan`",
                     num_seeds=True)
# population-based training of the scan's agents, inside its compiled scan
LINEN_PBT = Variant(script="ppo_linen_pbt", mode="pbt", flags=(), framework="linen", cost="jax", memory="jax",
                    color="#2c7fb8", sibling="ppo_linen_scan", num_seeds=True)
TORCH_NATIVE = Variant(script="ppo_torch_native", mode="eager", flags=(), framework="torch", cost="torch-native",
                       memory="torch_native", color="#f16913", sibling="ppo_torch", backend=TORCH_ENV,
                       design="PyTorch, env in torch", classic_only=True)
TORCH_NATIVE_COMPILE = Variant(script="ppo_torch_native", mode="compile", flags=("--compile",), framework="torch",
                               cost="torch-native-compile", memory="torch_native", color="#a63603", sibling="ppo_torch",
                               backend=TORCH_ENV, baseline="torch_native (eager)", design="torch.compile, env in torch",
                               classic_only=True)
# CUDA graphs of the compiled rollout step and update: GPU only
TORCH_NATIVE_COMPILE_CUDAGRAPHS = Variant(script="ppo_torch_native", mode="compile+cudagraphs",
                                          flags=("--compile", "--cudagraphs"), framework="torch",
                                          cost="torch-native-compile-cudagraphs", memory="torch_native",
                                          color="#54278f", sibling="ppo_torch", backend=TORCH_ENV,
                                          baseline="torch_native (compile)",
                                          design="torch.compile + CUDA graphs, env in torch", classic_only=True)
# DQN (CleanRL's CartPole-v1 DQN): three torch designs in three hues (ΔE2000 > 25 between any two); the cost
# families are the scripts' own (sweep/estimate.py DQN_PRIOR)
DQN_TORCH_GYMNASIUM = Variant(script="dqn_torch_gymnasium", mode="eager", flags=(), framework="torch",
                              cost="dqn-torch-gymnasium", memory="dqn-torch-gymnasium", color="#7a5c1e",
                              sibling="dqn_torch", backend=GYMNASIUM, analogue="torch_gymnasium (eager)",
                              design="PyTorch, NumPy env", classic_only=True)
DQN_LINEN_GYMNASIUM = Variant(script="dqn_linen_gymnasium", mode="jit", flags=(), framework="linen",
                              cost="dqn-linen-gymnasium", memory="dqn-jax", color="#35978f",
                              sibling="dqn_torch_gymnasium", backend=GYMNASIUM, analogue="linen_gymnasium (jit)",
                              design="Flax Linen, NumPy env", classic_only=True)
DQN_TORCH = Variant(script="dqn_torch", mode="env-jit", flags=(), framework="torch", cost="dqn-torch",
                    memory="dqn-torch", color="#fd8d3c", sibling="dqn_linen", analogue="torch (env-jit)",
                    design="PyTorch, JAX env")
DQN_LINEN = Variant(script="dqn_linen", mode="jit", flags=(), framework="linen", cost="dqn-linen", memory="dqn-jax",
                    color="#4292c6", analogue="linen (jit)", design="Flax Linen")
DQN_TORCH_COMPILE = Variant(script="dqn_torch_compile", mode="compile", flags=(), framework="torch",
                            cost="dqn-torch-compile", memory="dqn-torch", color="#a50f15", sibling="dqn_torch",
                            design="torch.compile, JAX env")
DQN_TORCH_COMPILE_CUDAGRAPHS = Variant(script="dqn_torch_compile", mode="compile+cudagraphs", flags=("--cudagraphs",),
                                       framework="torch", cost="dqn-torch-compile-cudagraphs", memory="dqn-torch",
                                       color="#9e9ac8", sibling="dqn_torch")
DQN_NNX = Variant(script="dqn_nnx", mode="tree", flags=(), framework="nnx", cost="dqn-nnx", memory="dqn-jax",
                  color="#238b45", sibling="dqn_linen", design="Flax NNX, tree mode")
DQN_EQUINOX = Variant(script="dqn_equinox", mode="jit", flags=(), framework="equinox", cost="dqn-equinox",
                      memory="dqn-jax", color="#ae017e", sibling="dqn_linen", design="Equinox")
# a population: --num-seeds agents, each with its own --hparams values
DQN_LINEN_VMAP = Variant(script="dqn_linen_vmap", mode="vmap", flags=(), framework="linen", cost="dqn-linen",
                         memory="dqn-jax", color="#084c8d", sibling="dqn_linen", num_seeds=True)
# PPO for continuous actions (CleanRL's ppo_continuous_action.py): gymnax's Pendulum-v1 and Brax in JAX, MuJoCo's C
# engine through Gymnasium; the PPO rows' hues, lighter
CONTINUOUS_LINEN = Variant(script="ppo_continuous_linen", mode="jit", flags=(), framework="linen",
                           cost="continuous-jax", memory="continuous-jax", color="#6baed6", design="Flax Linen")
CONTINUOUS_NNX = Variant(script="ppo_continuous_nnx", mode="tree", flags=(), framework="nnx", cost="continuous-jax",
                         memory="continuous-jax", color="#74c476", sibling="ppo_continuous_linen",
                         design="Flax NNX, tree mode")
CONTINUOUS_EQUINOX = Variant(script="ppo_continuous_equinox", mode="jit", flags=(), framework="equinox",
                             cost="continuous-jax", memory="continuous-jax", color="#f768a1",
                             sibling="ppo_continuous_linen", design="Equinox")
CONTINUOUS_TORCH = Variant(script="ppo_continuous_torch", mode="env-jit", flags=(), framework="torch",
                           cost="continuous-torch", memory="continuous-torch", color="#f4a582",
                           sibling="ppo_continuous_linen", design="PyTorch, JAX env")
CONTINUOUS_TORCH_COMPILE = Variant(script="ppo_continuous_torch", mode="compile", flags=("--compile",),
                                   framework="torch", cost="continuous-torch", memory="continuous-torch",
                                   color="#8c2d04", sibling="ppo_continuous_linen",
                                   baseline="continuous_torch (env-jit)", design="torch.compile, JAX env")
CONTINUOUS_TORCH_GYMNASIUM = Variant(script="ppo_continuous_torch_gymnasium", mode="eager", flags=(), framework="torch",
                                     cost="continuous-gymnasium", memory="continuous-torch", color="#dfc27d",
                                     sibling="ppo_continuous_torch", backend=GYMNASIUM, design="PyTorch, NumPy env")
CONTINUOUS_LINEN_GYMNASIUM = Variant(script="ppo_continuous_linen_gymnasium", mode="jit", flags=(), framework="linen",
                                     cost="continuous-gymnasium", memory="continuous-jax", color="#80cdc1",
                                     sibling="ppo_continuous_linen", backend=GYMNASIUM, design="Flax Linen, NumPy env")
# PPO on Atari (CleanRL's ppo_atari_envpool.py): the Nature CNN over ale-py's frames, one compiled call per env step in
# the JAX scripts; the PPO rows' hues, darkest
ATARI_LINEN = Variant(script="ppo_atari_linen", mode="jit", flags=(), framework="linen", cost="atari-jax",
                      memory="atari-jax", color="#08519c", backend=ALE)
ATARI_NNX = Variant(script="ppo_atari_nnx", mode="tree", flags=(), framework="nnx", cost="atari-jax",
                    memory="atari-jax", color="#006d2c", sibling="ppo_atari_linen", backend=ALE)
ATARI_EQUINOX = Variant(script="ppo_atari_equinox", mode="jit", flags=(), framework="equinox", cost="atari-jax",
                        memory="atari-jax", color="#7a0177", sibling="ppo_atari_linen", backend=ALE)
ATARI_TORCH = Variant(script="ppo_atari_torch", mode="eager", flags=(), framework="torch", cost="atari-torch",
                      memory="atari-torch", color="#d94801", sibling="ppo_atari_linen", backend=ALE)
ATARI_TORCH_COMPILE = Variant(script="ppo_atari_torch_compile", mode="compile", flags=(), framework="torch",
                              cost="atari-compile", memory="atari-torch", color="#662506", sibling="ppo_atari_torch",
                              backend=ALE, baseline="atari_torch (eager)")

VARIANTS = tuple(row for row in dict(globals()).values() if isinstance(row, Variant))  # every row, as written
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
