#!/usr/bin/env bash
# CI: bundled zoo presets (zoo-paper, then the size ladder), each sharded over a SLURM job
# array on a one-node cluster started here (.ci/slurm-cluster.sh) and merged by a dependent job
# (scripts/slurm/submit-zoo.sh), give the tables one process writes, byte for byte. Needs a release build of basis-lab.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${CARGO_TARGET_DIR:-target}")/release/basis-lab
work=$(mktemp -d)
trap '.ci/slurm-cluster.sh stop "$work/cluster"; rm -rf "$work"' EXIT
.ci/slurm-cluster.sh start "$work/cluster"
export SLURM_CONF=$work/cluster/slurm.conf BASIS_LAB=$bin

# Nine rules at a small budget: a few seconds per process.
args=(--seeds 1 --budget 2000)
"$bin" zoo zoo-paper "${args[@]}" --quiet --out "$work/one" >/dev/null
if ! scripts/slurm/submit-zoo.sh --wait zoo-paper "$work/array" 3 "${args[@]}" >/dev/null; then
    tail -n 20 "$work"/array/slurm-*.out >&2 || true
    exit 1
fi
for f in zoo.csv zoo.md; do
    cmp "$work/one/$f" "$work/array/$f"
done
echo "slurm: zoo-paper in a 3-task job array merged byte for byte"

# The size ladder (Table 11, n = 40 … 128) at one seed and 100 steps: the sizes dimension and
# the per-size problem building, split over a 4-task array.
args=(--seeds 1 --budget 100)
"$bin" zoo ladder "${args[@]}" --quiet --out "$work/ladder-one" >/dev/null
if ! scripts/slurm/submit-zoo.sh --wait ladder "$work/ladder-array" 4 "${args[@]}" >/dev/null; then
    tail -n 20 "$work"/ladder-array/slurm-*.out >&2 || true
    exit 1
fi
for f in zoo.csv zoo.md; do
    cmp "$work/ladder-one/$f" "$work/ladder-array/$f"
done
echo "slurm: ladder (n = 40, 64, 96, 128) in a 4-task job array merged byte for byte"
