#!/usr/bin/env bash
# CI: a bundled zoo preset, sharded over a SLURM job array on a one-node cluster started here
# (.ci/slurm-cluster.sh) and merged by a dependent job (scripts/slurm/submit-zoo.sh), gives the
# tables one process writes, byte for byte. Needs a release build of basis-lab.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/target/release/basis-lab
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
