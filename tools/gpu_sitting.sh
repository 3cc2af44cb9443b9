#!/usr/bin/env bash
# gpu_sitting.sh: the GPU reference sitting (benchmark.sh --grid gpu) in chunks, one per window of GPU time.
#
#   tools/gpu_sitting.sh command MINUTES [benchmark.sh options]
#       here, before a window: prints the command to run on the GPU machine (carrying .whl, the wheels the image
#       lacks: docs/running.md), naming this commit for the sweep's record; refused while the tree differs from the
#       commit outside results/.
#   tools/gpu_sitting.sh run MINUTES [benchmark.sh options]
#       on the GPU machine, in the repository: installs the wheels carried in .whl/ (what the machine's image lacks)
#       into a folder of its own, runs `benchmark.sh --grid gpu --max-minutes` into results/gpu-<model>/ (the GPU's
#       model from nvidia-smi; -quick with --quick), so that no run starts that its estimate ends after MINUTES
#       (the preparation and the packing counted), stops the chunk at MINUTES in any case, and packs the sweep
#       folder into one archive, <folder>.tar.gz, in $OUT (the folder the GPU machine sends back; default: the
#       current one). The sweep folder travels back to the next window with the repository: the same command
#       resumes where the chunk ended (benchmark.sh skips finished runs).
#   tools/gpu_sitting.sh unpack ARCHIVE [RESULTS]
#       here: the archive's sweep folder into RESULTS (default: results/ of the repository), replacing the folder
#       of the same name there if the archive holds every run that folder has finished (it was sent out with it).
#
# The image's own jax, flax, torch and equinox run (CUDA builds; their versions go into the sweep's system.json and
# from there into the report's header); the pinned CPU set-up is unchanged. PYTHON (default: python3) runs it all.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PACK_SECONDS=30 # kept for the packing at the end of a chunk
RUN_TIMEOUT=180 # a run of the GPU grid that takes longer is stopped and recorded as "timeout"

die() {
  echo "gpu_sitting.sh: $*" >&2
  exit 2
}

usage() {
  sed -n '2,22s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

slug() { # "NVIDIA H200" -> nvidia-h200
  tr '[:upper:]' '[:lower:]' <<<"$1" | sed -E 's/[^a-z0-9]+/-/g; s/^-+|-+$//g'
}

install_wheels() { # the carried wheels, into /tmp/benchback-site, ahead of the image's packages
  local site=${TMPDIR:-/tmp}/benchback-site
  compgen -G "$ROOT/.whl/*.whl" >/dev/null || return 0
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
    "$ROOT"/.whl/*.whl || die "installing the wheels of .whl/ failed"
  export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
}

run_chunk() {
  local minutes=${1:-} start=$SECONDS model out name status=0 left
  [[ $minutes =~ ^[1-9][0-9]*$ ]] || die "run needs a positive number of minutes, not '${minutes}'"
  shift
  model=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1) || true
  [[ -n $model ]] || die "no NVIDIA GPU here (nvidia-smi lists none): the GPU grid runs on a GPU machine"
  name=gpu-$(slug "$model")
  [[ " $* " == *" --quick "* ]] && name+=-quick
  out=$ROOT/results/$name
  install_wheels
  left=$(((minutes * 60 - (SECONDS - start) - PACK_SECONDS) / 60))
  ((left >= 1)) || die "$minutes min leave no whole minute for runs after the preparation"
  echo "gpu_sitting.sh: $model; a chunk of $left min into $out"
  # stopped at the window's end in any case (SIGTERM: the running run is stopped, not recorded); the chunk's exit
  # status is reported, the archive made whatever it is
  timeout --signal=TERM --kill-after=10 $((minutes * 60 - (SECONDS - start) - PACK_SECONDS)) \
    "$ROOT/benchmark.sh" --grid gpu --out "$out" --max-minutes "$left" --timeout "$RUN_TIMEOUT" "$@" || status=$?
  mkdir -p "${OUT:-.}"
  tar -czf "${OUT:-.}/$name.tar.gz" -C "$ROOT/results" --exclude=.lock "$name"
  echo "gpu_sitting.sh: benchmark.sh exit status $status; packed $(du -h "${OUT:-.}/$name.tar.gz" | cut -f1) into ${OUT:-.}/$name.tar.gz"
  return "$status"
}

print_command() {
  local minutes=${1:-} commit words
  [[ $minutes =~ ^[1-9][0-9]*$ ]] || die "command needs a positive number of minutes, not '${minutes}'"
  shift
  commit=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null) || die "command needs the repository's git history"
  [[ -z $(git -C "$ROOT" status --porcelain -- . ':!results') ]] ||
    die "the tree differs from commit ${commit:0:7} outside results/: commit first, so that the sweep names its code"
  printf -v words ' %q' "$@"
  echo "BENCHBACK_GIT_COMMIT=$commit bash tools/gpu_sitting.sh run $minutes${words% }"
}

finished_runs() { # finished_runs FOLDER: the runs the sweep folder holds finished, one a line: those its records.txt
  # says finished (benchmark.sh's header describes it), and those an earlier version's finished.txt lists
  cat "$1/finished.txt" 2>/dev/null || true
  awk '$2 == "finished" { print $1 }' "$1/records.txt" 2>/dev/null || true
}

unpack() {
  local archive=${1:-} results=${2:-$ROOT/results} name tmp
  [[ -f $archive ]] || die "unpack needs an archive made by 'run', not '${archive}'"
  name=$(tar -tzf "$archive" | cut -d/ -f1 | sort -u)
  [[ $name =~ ^gpu-[a-z0-9-]+$ ]] || die "$archive holds no single gpu-<model> folder"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  tar -xzf "$archive" -C "$tmp"
  if [[ -n $(comm -23 <(finished_runs "$results/$name" | sort) <(finished_runs "$tmp/$name" | sort)) ]]; then
    die "$results/$name has finished runs that $archive lacks: an older chunk; nothing replaced"
  fi
  mkdir -p "$results"
  rm -rf "${results:?}/$name"
  mv "$tmp/$name" "$results/$name"
  echo "gpu_sitting.sh: $results/$name ($(finished_runs "$results/$name" | wc -l) runs finished)"
}

export PYTHON=${PYTHON:-python3}
case ${1:-} in
  command) shift && print_command "$@" ;;
  run) shift && run_chunk "$@" ;;
  unpack) shift && unpack "$@" ;;
  -h | --help) usage ;;
  *) die "needs 'command MINUTES [options]', 'run MINUTES [options]' or 'unpack ARCHIVE [RESULTS]' (see --help)" ;;
esac
