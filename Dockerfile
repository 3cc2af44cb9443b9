# syntax=docker/dockerfile:1
# benchback on an NVIDIA GPU: CUDA-enabled JAX and the CUDA build of torch, at the versions
# requirements.txt pins. The CUDA libraries come as pip wheels; the host needs only the driver.
#   docker build -t benchback .
#   docker run --gpus all -v "$PWD/results:/home/bench/benchback/results" benchback --quick
FROM python:3.11-slim-bookworm

# gcc/g++: torch.compile (Inductor) builds kernels with the host compiler; git for the sweep's records
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc g++ git \
    && rm -rf /var/lib/apt/lists/*

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1 \
    XLA_PYTHON_CLIENT_PREALLOCATE=false

RUN useradd --create-home --uid 1000 bench
USER bench
WORKDIR /home/bench/benchback
ENV PATH=/home/bench/.local/bin:$PATH

# Dependencies first, so that editing a script does not reinstall them. From PyPI, torch==2.13.0
# is the CUDA 13 build; JAX gets the CUDA 13 plugin of the version requirements.txt pins.
COPY --chown=bench:bench requirements.txt .
RUN pip install --user -r requirements.txt \
    && pip install --user "jax[cuda13]==$(sed -n 's/^jax==//p' requirements.txt)"

# The whole tree but what .dockerignore leaves out (results, tests, docs, git and caches): every script, the sweep,
# the report, the search and the tools, so that nothing here lists a file that a later change could leave stale.
COPY --chown=bench:bench . .
RUN mkdir -p results
VOLUME ["/home/bench/benchback/results"]

ENTRYPOINT ["./benchmark.sh"]
CMD ["--help"]
