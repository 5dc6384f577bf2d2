#!/usr/bin/env bash
# Compile-time budget (issue: benchmarks): builds from cold, in debug, the downstream crate
# with three derived tools (pilotage-types' default features) and the serde + schemars
# baseline, each in a fresh target directory, several times (ROUNDS, default 3, the order
# rotating between rounds), and prints the median wall times and their ratio (target <= 1.3).
# Dependencies are fetched first so that downloads are not timed.
#
# Incremental compilation is off (CARGO_INCREMENTAL=0), as a user's build compiles
# pilotage-types from the registry: cargo compiles a path dependency incrementally (writing
# its dependency graph, about 0.8 s for pilotage-types on this machine) and a registry one
# not. The user's own crate (the baseline's and the downstream's alike) is then built without
# it as well. INCREMENTAL=1 times the path dependencies as cargo builds them here.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

build() { # name dir: prints the wall time of one cold build
  local name=$1 dir=$2
  rm -rf "${scratch:?}/$name"
  local start end
  start=$(date +%s.%N)
  (cd "$dir" && CARGO_INCREMENTAL="${INCREMENTAL:-0}" CARGO_TARGET_DIR="$scratch/$name" cargo build --quiet)
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# On a shared machine one cold build varies by seconds: each crate is built ROUNDS times, the
# order rotating between rounds, and the medians are compared.
rounds=${ROUNDS:-3}
crates=(baseline downstream derive-only)
declare -A dirs=([baseline]="$here/baseline" [downstream]="$here/downstream" [derive-only]="$here/downstream-derive-only")
declare -A times
for name in "${crates[@]}"; do (cd "${dirs[$name]}" && cargo fetch --quiet); done
for ((round = 0; round < rounds; round++)); do
  for ((i = 0; i < ${#crates[@]}; i++)); do
    name=${crates[$(((i + round) % ${#crates[@]}))]}
    t=$(build "$name" "${dirs[$name]}")
    times[$name]="${times[$name]:-} $t"
    echo "round $((round + 1)): $name ${t}s" >&2
  done
done
baseline=$(median ${times[baseline]})
downstream=$(median ${times[downstream]})
derive_only=$(median ${times[derive-only]})
ratio() { echo "scale=2; $1 / $baseline" | bc; }
echo "machine: $(nproc) cores, $(rustc --version); medians of $rounds cold builds each; CARGO_INCREMENTAL=${INCREMENTAL:-0}"
echo "baseline: three structs, serde + schemars derives only:                       ${baseline}s  (${times[baseline]} )"
echo "downstream: three derived tools, pilotage-types' default features (validate + derive):"
echo "                                                                              ${downstream}s  ratio $(ratio "$downstream") (target <= 1.3)  (${times[downstream]} )"
echo "the same with pilotage-types trimmed to derive:                               ${derive_only}s  ratio $(ratio "$derive_only")  (${times[derive-only]} )"
