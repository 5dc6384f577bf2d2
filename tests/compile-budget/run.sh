#!/usr/bin/env bash
# Compile-time budget (issue: benchmarks): builds from cold, in debug, the downstream crate
# with three derived tools (pilotage-types' default features) and the serde + schemars
# baseline, each in a fresh target directory, and prints the wall times and their ratio
# (target <= 1.3). Dependencies are
# fetched first so that downloads are not timed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

build() { # name dir [cargo args...]
  local name=$1 dir=$2; shift 2
  (cd "$dir" && cargo fetch --quiet)
  local start end
  start=$(date +%s.%N)
  (cd "$dir" && CARGO_TARGET_DIR="$scratch/$name" cargo build --quiet "$@")
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

baseline=$(build baseline "$here/baseline")
downstream=$(build downstream "$here/downstream")
derive_only=$(build derive-only "$here/downstream-derive-only")
ratio() { echo "scale=2; $1 / $baseline" | bc; }
echo "machine: $(nproc) cores, $(rustc --version)"
echo "baseline: three structs, serde + schemars derives only:                       ${baseline}s"
echo "downstream: three derived tools, pilotage-types' default features (validate + derive):"
echo "                                                                              ${downstream}s  ratio $(ratio "$downstream") (target <= 1.3)"
echo "the same with pilotage-types trimmed to derive:                               ${derive_only}s  ratio $(ratio "$derive_only")"
