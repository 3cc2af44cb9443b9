"""The registry of variants: one row per (script, mode), the one place that names a script. The sweep, the report,
the tools and the tests read what a variant is from here: its flags, framework, algorithm, env backend, cost and
memory families (the estimates), chart label and colour, the sibling it is written beside, its analogue in the
other algorithm, and what the docs say of it (tools/derive.py writes docs/method.md's table of variants and
docs/ease-of-use.md from the rows). Adding a script: the script, its rows here, its tests (docs/extending.md).
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
    # what the docs say of it (tools/derive.py writes docs/method.md's variants table and docs/ease-of-use.md from it)
    note: str = ""  # the ease-of-use page's: what the framework made the code do (a mode without one is not listed)
    # on the script's default row (no flags) only, for the script as a whole:
    compiled: str = ""  # docs/method.md's "what is compiled" of the script
    options: tuple = ()  # the script's options shown beside its mode ("--num-seeds N")
    unswept: tuple = ()  # the script's modes that no sweep runs, as (mode, flags) pairs

    @property
    def gpu_only(self) -> bool:
        """Replays CUDA graphs: a GPU's mode only."""
        return self.mode.endswith("cudagraphs")

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
                baseline="linen (none)", analogue="dqn_linen (jit)", design="Flax Linen", cnn=True,
                note="Rollout (`lax.scan` over the steps), GAE and update: three `jax.jit` functions on a parameter "
                     "tree applied by `apply`; carries donated.",
                compiled="`jit`: rollout, GAE and update under `jax.jit`")
NNX_NONE = Variant(script="ppo_nnx", mode="none", flags=("--no-jit",), framework="nnx", cost="jax-eager", memory="jax",
                   color="#a1d99b", sibling="ppo_linen", cnn=True)
NNX = Variant(script="ppo_nnx", mode="jit", flags=(), framework="nnx", cost="jax", memory="jax", color="#41ab5d",
              sibling="ppo_linen", baseline="nnx (none)", cnn=True,
              note="Stateful `nnx.Module` and `nnx.Optimizer` updated in place; graph-mode `nnx.jit` walks the "
                   "objects on the host at every call (rollout call 1.7–5.8 ms, Linen's 0.4).",
              compiled="`jit`: rollout and update under `nnx.jit` (graph mode), GAE (arrays only) under `jax.jit`")
NNX_CACHED = Variant(script="ppo_nnx_cached", mode="cached", flags=(), framework="nnx", cost="jax", memory="jax",
                     color="#00441b", sibling="ppo_nnx", baseline="nnx (none)", design="Flax NNX, `cached_partial`",
                     cnn=True,
                     note="The objects bound once by `nnx.cached_partial` (graph mode, pinned at import); rollout "
                          "call 0.8–1.0 ms of host time.",
                     compiled="`nnx.jit` bound once through `nnx.cached_partial`")
NNX_TREE = Variant(script="ppo_nnx_tree", mode="tree", flags=(), framework="nnx", cost="jax", memory="jax",
                   color="#1b9e77", sibling="ppo_nnx", baseline="nnx (none)", design="Flax NNX, tree mode", cnn=True,
                   note="NNX tree mode (objects as plain pytrees, pinned at import), bound once by "
                        "`nnx.jit_partial`: rollout call 0.34 ms of host time.",
                   compiled="NNX tree mode (`graph=False`), bound once with `nnx.jit_partial`")
EQUINOX_NONE = Variant(script="ppo_equinox", mode="none", flags=("--no-jit",), framework="equinox", cost="jax-eager",
                       memory="jax", color="#fbb4b9", sibling="ppo_linen", cnn=True)
EQUINOX = Variant(script="ppo_equinox", mode="jit", flags=(), framework="equinox", cost="jax", memory="jax",
                  color="#c51b8a", sibling="ppo_linen", baseline="equinox (none)", design="Equinox", cnn=True,
                  note="The agent an `eqx.Module` of arrays, `vmap`ped over the batch; plain `jax.jit`, since "
                       "`eqx.filter_jit` waits for its computation.",
                  compiled="`jit`: rollout, GAE and update under `jax.jit`, which takes the all-array `eqx.Module`s "
                           "as they are")
TORCH_NONE = Variant(script="ppo_torch", mode="none", flags=("--no-jit-env",), framework="torch", cost="torch-eager",
                     memory="torch", color="#fdae6b", sibling="ppo_linen", cnn=True)
TORCH = Variant(script="ppo_torch", mode="env-jit", flags=(), framework="torch", cost="torch", memory="torch",
                color="#e6550d", sibling="ppo_linen", baseline="torch (none)", analogue="dqn_torch (env-jit)",
                design="PyTorch, JAX env", cnn=True,
                note="Eager torch model, fused Adam; the gymnax env one jitted JAX call per step, the action a NumPy "
                     "view, the step back by DLPack.",
                compiled="torch runs eagerly; `env-jit` jits the JAX env's vmapped reset and step, handed over by "
                         "DLPack")
TORCH_COMPILE = Variant(script="ppo_torch_compile", mode="compile", flags=(), framework="torch", cost="compile",
                        memory="torch", color="#7f2704", sibling="ppo_torch", baseline="torch (env-jit)",
                        design="torch.compile, JAX env", cnn=True,
                        note="Only the minibatch update compiled, one graph: `torch.func` gradients and Adam written "
                             "out, since `backward()` and `optimizer.step()` break it.",
                        compiled="`torch.compile` on the minibatch update (forward, loss, its backward graph, clip); "
                                 "the rest eager, by measurement ([variants.md](variants.md))")
# CUDA graphs: GPU only
TORCH_COMPILE_CUDAGRAPHS = Variant(script="ppo_torch_compile", mode="compile+cudagraphs", flags=("--cudagraphs",),
                                   framework="torch", cost="compile-cudagraphs", memory="torch", color="#756bb1",
                                   sibling="ppo_torch", baseline="torch_compile (compile)",
                                   design="torch.compile + CUDA graphs, JAX env", cnn=True)
# the Gymnasium scripts: a Python loop over env copies; "-vector" Gymnasium's NumPy-vectorised env, "-async" its
# subprocesses
LINEN_GYMNASIUM = Variant(script="ppo_linen_gymnasium", mode="jit", flags=(), framework="linen", cost="gymnasium",
                          memory="linen_gymnasium", color="#17becf", sibling="ppo_linen", backend=GYMNASIUM,
                          analogue="dqn_linen_gymnasium (jit)", classic_only=True,
                          note="The env in NumPy cannot sit in `lax.scan`: a Python rollout loop, one jitted call "
                               "and one host round trip per env step.",
                          compiled="`jit`: the per-step policy and bookkeeping, GAE and update under `jax.jit`, on "
                                   "the same Gymnasium CPU env",
                          unswept=(("none", ("--no-jit",)),))
LINEN_GYMNASIUM_VECTOR = Variant(script="ppo_linen_gymnasium", mode="jit-vector", flags=("--vectorization", "vector"),
                                 framework="linen", cost="gymnasium-vector", memory="linen_gymnasium", color="#0b6e7a",
                                 sibling="ppo_linen", backend=GYMNASIUM, design="Flax Linen, NumPy env",
                                 classic_only=True)
TORCH_GYMNASIUM = Variant(script="ppo_torch_gymnasium", mode="eager", flags=(), framework="torch", cost="gymnasium",
                          memory="torch_gymnasium", color="#8c6d31", sibling="ppo_torch", backend=GYMNASIUM,
                          analogue="dqn_torch_gymnasium (eager)", classic_only=True,
                          note="No JAX: a Gymnasium env in NumPy on the CPU; each step the actions cross to NumPy "
                               "and the packed step to torch.",
                          compiled="torch eager on a Gymnasium vector env on the CPU: a loop over env copies, one "
                                   "process per copy, or one NumPy-vectorised env")
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
                     num_seeds=True,
                     note="Chunks of iterations in one `lax.scan`, agents under `vmap`; metrics reach the host by an "
                          "ordered `io_callback`, the chunks in a thread.",
                     compiled="the whole training, `lax.scan` over iterations, N agents under `jax.vmap` (each with "
                              "its own seed and float hyperparameters), logged through a host callback",
                     options=("--num-seeds N", "--chunk-iterations K", "--hparams FILE"))
# population-based training of the scan's agents, inside its compiled scan
LINEN_PBT = Variant(script="ppo_linen_pbt", mode="pbt", flags=(), framework="linen", cost="jax", memory="jax",
                    color="#2c7fb8", sibling="ppo_linen_scan", num_seeds=True,
                    note="`ppo_linen_scan.py`'s agents with population-based training inside the compiled scan: the "
                         "worst copy the best (parameters, optimiser state, envs) and perturb their `--hparams` "
                         "floats, all on the device.",
                    compiled="`ppo_linen_scan.py`'s compiled training with population-based training inside the "
                             "scan: exploit (copy a top agent's whole state) and explore (perturb its float "
                             "hyperparameters) on the device, no host round trip "
                             "([tuning.md](tuning.md#population-based-training-ppo_linen_pbtpy-and---pbt-n))",
                    options=("--num-seeds N", "--pbt-interval K", "--hparams FILE"))
TORCH_NATIVE = Variant(script="ppo_torch_native", mode="eager", flags=(), framework="torch", cost="torch-native",
                       memory="torch_native", color="#f16913", sibling="ppo_torch", backend=TORCH_ENV,
                       design="PyTorch, env in torch", classic_only=True,
                       note="The envs rewritten in torch (gymnax's dynamics, checked against gymnax by a test); "
                            "eager, one env step is some 40 small ops.",
                       compiled="`compile`: the whole rollout step (policy, env, auto-reset) and the minibatch "
                                "update, one graph each; no JAX in the process")
TORCH_NATIVE_COMPILE = Variant(script="ppo_torch_native", mode="compile", flags=("--compile",), framework="torch",
                               cost="torch-native-compile", memory="torch_native", color="#a63603", sibling="ppo_torch",
                               backend=TORCH_ENV, baseline="torch_native (eager)", design="torch.compile, env in torch",
                               classic_only=True,
                               note="The whole rollout step (policy, env, reset, episode tracking) one "
                                    "`torch.compile` graph; the update `ppo_torch_compile.py`'s functional graph.")
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
                              design="PyTorch, NumPy env", classic_only=True,
                              note="CleanRL `dqn.py`'s design: a Python loop over a Gymnasium env, NumPy ε-coins and "
                                   "replay, the torch Q-network on the CPU; no JAX.",
                              compiled="DQN: torch eager on a Gymnasium vector env, a Python loop per env step "
                                       "(CleanRL `dqn.py`'s design)")
DQN_LINEN_GYMNASIUM = Variant(script="dqn_linen_gymnasium", mode="jit", flags=(), framework="linen",
                              cost="dqn-linen-gymnasium", memory="dqn-jax", color="#35978f",
                              sibling="dqn_torch_gymnasium", backend=GYMNASIUM, analogue="linen_gymnasium (jit)",
                              design="Flax Linen, NumPy env", classic_only=True,
                              note="CleanRL `dqn_jax.py`'s design: `dqn_torch_gymnasium.py`'s loop, the greedy "
                                   "action and the gradient step each one `jax.jit` call.",
                              compiled="DQN: the greedy action and the gradient step under `jax.jit`, on the same "
                                       "Gymnasium env (CleanRL `dqn_jax.py`'s design)",
                              unswept=(("none", ("--no-jit",)),))
DQN_TORCH = Variant(script="dqn_torch", mode="env-jit", flags=(), framework="torch", cost="dqn-torch",
                    memory="dqn-torch", color="#fd8d3c", sibling="dqn_linen", analogue="torch (env-jit)",
                    design="PyTorch, JAX env",
                    note="A Python loop per env step: the gymnax step jitted, handed over by DLPack; ε-coins drawn "
                         "per iteration in JAX; replay in torch tensors.",
                    compiled="DQN: torch eager; the gymnax env's step and the iteration's exploration draws under "
                             "`jax.jit`, DLPack hand-over",
                    unswept=(("none", ("--no-jit-env",)),))
DQN_LINEN = Variant(script="dqn_linen", mode="jit", flags=(), framework="linen", cost="dqn-linen", memory="dqn-jax",
                    color="#4292c6", analogue="linen (jit)", design="Flax Linen",
                    note="Each 10,000-transition iteration one compiled call: `lax.scan` over env steps, the "
                         "gradient steps due in `lax.fori_loop`, replay in the donated carry.",
                    compiled="DQN: each iteration one compiled call, `lax.scan` over the env steps with acting, env "
                             "step, replay writes, the gradient steps due and target syncs inside (PureJaxRL's "
                             "design)")
DQN_TORCH_COMPILE = Variant(script="dqn_torch_compile", mode="compile", flags=(), framework="torch",
                            cost="dqn-torch-compile", memory="dqn-torch", color="#a50f15", sibling="dqn_torch",
                            design="torch.compile, JAX env",
                            note="The gradient step one graph with Adam written out (`torch.func`); acting eager; it "
                                 "compiles in iteration 1, the first gradient step, not 0.",
                            compiled="DQN: `dqn_torch.py`'s loop, the gradient step (replay batch to Adam step) one "
                                     "`torch.compile` graph; acting eager")
DQN_TORCH_COMPILE_CUDAGRAPHS = Variant(script="dqn_torch_compile", mode="compile+cudagraphs", flags=("--cudagraphs",),
                                       framework="torch", cost="dqn-torch-compile-cudagraphs", memory="dqn-torch",
                                       color="#9e9ac8", sibling="dqn_torch")
DQN_NNX = Variant(script="dqn_nnx", mode="tree", flags=(), framework="nnx", cost="dqn-nnx", memory="dqn-jax",
                  color="#238b45", sibling="dqn_linen", design="Flax NNX, tree mode",
                  note="NNX tree mode: objects bound by `nnx.jit_partial`, never returned (no aliasing); `nnx.scan`, "
                       "`nnx.fori_loop` inside; the target network built, not cloned.",
                  compiled="DQN: `dqn_linen.py`'s design (each iteration one compiled call) in Flax NNX tree mode, "
                           "bound once by `nnx.jit_partial`")
DQN_EQUINOX = Variant(script="dqn_equinox", mode="jit", flags=(), framework="equinox", cost="dqn-equinox",
                      memory="dqn-jax", color="#ae017e", sibling="dqn_linen", design="Equinox",
                      note="The Q-network an `eqx.Module` in the carry of a plain `jax.jit`; "
                           "`eqx.filter_value_and_grad`, optax on `eqx.filter`, a NamedTuple train state.",
                      compiled="DQN: `dqn_linen.py`'s design (each iteration one compiled call) in Equinox")
# a population: --num-seeds agents, each with its own --hparams values
DQN_LINEN_VMAP = Variant(script="dqn_linen_vmap", mode="vmap", flags=(), framework="linen", cost="dqn-linen",
                         memory="dqn-jax", color="#084c8d", sibling="dqn_linen", num_seeds=True,
                         note="`dqn_linen.py`'s iteration with `--num-seeds` agents under `vmap`, each with its own "
                              "seed and `--hparams` floats (the LR through `optax.inject_hyperparams`): a population "
                              "for `tune.py`.",
                         compiled="DQN: `dqn_linen.py`'s iteration with N agents under `jax.vmap` in its one "
                                  "compiled call, each with its own seed, learning rate, γ, τ and ε schedule (a "
                                  "population for `tune.py --population`)",
                         options=("--num-seeds N", "--hparams FILE"))
# PPO for continuous actions (CleanRL's ppo_continuous_action.py): gymnax's Pendulum-v1 and Brax in JAX, MuJoCo's C
# engine through Gymnasium; the PPO rows' hues, lighter
CONTINUOUS_LINEN = Variant(script="ppo_continuous_linen", mode="jit", flags=(), framework="linen",
                           cost="continuous-jax", memory="continuous-jax", color="#6baed6", design="Flax Linen",
                           note="CleanRL's `ppo_continuous_action.py` in `ppo_linen.py`'s design: a Gaussian policy, "
                                "the normalisers as pure functions in the rollout carry, Brax envs behind gymnax's "
                                "interface.",
                           compiled="PPO for continuous actions (CleanRL's `ppo_continuous_action.py`: a Gaussian "
                                    "policy, running-statistics normalisers) on gymnax's Pendulum-v1 or a Brax env: "
                                    "rollout (the normalisers in it), GAE and update under `jax.jit`")
CONTINUOUS_NNX = Variant(script="ppo_continuous_nnx", mode="tree", flags=(), framework="nnx", cost="continuous-jax",
                         memory="continuous-jax", color="#74c476", sibling="ppo_continuous_linen",
                         design="Flax NNX, tree mode",
                         note="`ppo_nnx_tree.py`'s design for the Gaussian policy: tree mode, objects bound by "
                              "`nnx.jit_partial`, the log-std an `nnx.Param`.",
                         compiled="the same in NNX tree mode, bound once with `nnx.jit_partial`")
CONTINUOUS_EQUINOX = Variant(script="ppo_continuous_equinox", mode="jit", flags=(), framework="equinox",
                             cost="continuous-jax", memory="continuous-jax", color="#f768a1",
                             sibling="ppo_continuous_linen", design="Equinox",
                             note="`ppo_equinox.py`'s design: the agent an `eqx.Module` whose log-std is an array "
                                  "field; plain `jax.jit`.",
                             compiled="the same in Equinox, under `jax.jit`")
CONTINUOUS_TORCH = Variant(script="ppo_continuous_torch", mode="env-jit", flags=(), framework="torch",
                           cost="continuous-torch", memory="continuous-torch", color="#f4a582",
                           sibling="ppo_continuous_linen", design="PyTorch, JAX env",
                           note="The torch agent on the JAX env through DLPack; the normalisers stay in the jitted "
                                "env step (they are CleanRL's env wrappers).",
                           compiled="the torch agent; the JAX env's step and the normalisers (CleanRL's env "
                                    "wrappers) jitted, handed over by DLPack; `compile`: the minibatch update under "
                                    "`torch.compile`")
CONTINUOUS_TORCH_COMPILE = Variant(script="ppo_continuous_torch", mode="compile", flags=("--compile",),
                                   framework="torch", cost="continuous-torch", memory="continuous-torch",
                                   color="#8c2d04", sibling="ppo_continuous_linen",
                                   baseline="continuous_torch (env-jit)", design="torch.compile, JAX env",
                                   note="`--compile`: the minibatch update one `torch.compile` graph, as in "
                                        "`ppo_torch_compile.py`.")
CONTINUOUS_TORCH_GYMNASIUM = Variant(script="ppo_continuous_torch_gymnasium", mode="eager", flags=(), framework="torch",
                                     cost="continuous-gymnasium", memory="continuous-torch", color="#dfc27d",
                                     sibling="ppo_continuous_torch", backend=GYMNASIUM, design="PyTorch, NumPy env",
                                     note="The classic stack: a Gymnasium vector env (MuJoCo's C engine) on the CPU, "
                                          "the normalisers in NumPy, the torch agent.",
                                     compiled="the torch agent on a Gymnasium vector env on the CPU (MuJoCo's C "
                                              "engine: Hopper-v5, Ant-v5; or Pendulum-v1), the normalisers in NumPy")
CONTINUOUS_LINEN_GYMNASIUM = Variant(script="ppo_continuous_linen_gymnasium", mode="jit", flags=(), framework="linen",
                                     cost="continuous-gymnasium", memory="continuous-jax", color="#80cdc1",
                                     sibling="ppo_continuous_linen", backend=GYMNASIUM, design="Flax Linen, NumPy env",
                                     note="`ppo_linen_gymnasium.py`'s design on the same Gymnasium env: the policy "
                                          "step and the update jitted, the normalisers in NumPy.",
                                     compiled="the Linen agent on the same Gymnasium env: the per-step policy and "
                                              "the update under `jax.jit`")
# PPO on Atari (CleanRL's ppo_atari_envpool.py): the Nature CNN over ale-py's frames, one compiled call per env step in
# the JAX scripts; the PPO rows' hues, darkest
ATARI_LINEN = Variant(script="ppo_atari_linen", mode="jit", flags=(), framework="linen", cost="atari-jax",
                      memory="atari-jax", color="#08519c", backend=ALE,
                      note="CleanRL's `ppo_atari_envpool.py` in `ppo_linen_gymnasium.py`'s design: the Nature CNN on "
                           "ale-py's uint8 frames, one jitted call per env step; lives and reward signs handled in "
                           "the learner.",
                      compiled="PPO on Atari (CleanRL's `ppo_atari_envpool.py`: the Nature CNN over ale-py's stacked "
                               "frames): the per-step policy and bookkeeping, GAE and update under `jax.jit`",
                      unswept=(("none", ("--no-jit",)),))
ATARI_NNX = Variant(script="ppo_atari_nnx", mode="tree", flags=(), framework="nnx", cost="atari-jax",
                    memory="atari-jax", color="#006d2c", sibling="ppo_atari_linen", backend=ALE,
                    note="The same in NNX tree mode: the per-step call and the update bound once by "
                         "`nnx.jit_partial`, the rollout state `nnx.Variable`s updated in place.",
                    compiled="the same in NNX tree mode, bound once with `nnx.jit_partial`")
ATARI_EQUINOX = Variant(script="ppo_atari_equinox", mode="jit", flags=(), framework="equinox", cost="atari-jax",
                        memory="atari-jax", color="#7a0177", sibling="ppo_atari_linen", backend=ALE,
                        note="The same in Equinox: the CNN convolves one CHW frame at a time under `vmap`; plain "
                             "`jax.jit`.",
                        compiled="the same in Equinox, under `jax.jit`",
                        unswept=(("none", ("--no-jit",)),))
ATARI_TORCH = Variant(script="ppo_atari_torch", mode="eager", flags=(), framework="torch", cost="atari-torch",
                      memory="atari-torch", color="#d94801", sibling="ppo_atari_linen", backend=ALE,
                      note="CleanRL's Atari agent in eager torch: `nn.Conv2d` on the frames as the env stacks them "
                           "(NCHW), fused Adam.",
                      compiled="the torch agent, eager")
ATARI_TORCH_COMPILE = Variant(script="ppo_atari_torch_compile", mode="compile", flags=(), framework="torch",
                              cost="atari-compile", memory="atari-torch", color="#662506", sibling="ppo_atari_torch",
                              backend=ALE, baseline="atari_torch (eager)",
                              note="The per-step policy and the minibatch update `torch.compile` graphs, Adam "
                                   "written out as in `ppo_torch_compile.py`.",
                              compiled="the per-step policy and the minibatch update under `torch.compile`, one "
                                       "graph each")

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


def default_row(script: str) -> Variant:
    """The row of the script's default mode, the one without flags: it also says what the docs say of the script as a
    whole (compiled, options, unswept)."""
    return next(row for row in VARIANTS if row.script == script and not row.flags)
