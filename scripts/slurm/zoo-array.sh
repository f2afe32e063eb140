#!/usr/bin/env bash
# One shard of a basis-lab zoo sweep per task of a SLURM job array (docs/cluster.md):
#
#   sbatch --array=0-7 scripts/slurm/zoo-array.sh PRESET OUT [zoo options...]
#
# Task i of N runs `basis-lab zoo PRESET --shard i/N` into OUT/shard-i. Once every task has
# finished, `basis-lab merge OUT/shard-* --out OUT` writes the tables one process would write;
# scripts/slurm/submit-zoo.sh submits both steps. The array must be one contiguous range.
# BASIS_LAB names the program (default: basis-lab on the PATH). Resources below are for the
# bundled presets (n ≤ 128) with one instance per task; raise --mem-per-cpu (or set
# SBATCH_MEM_PER_CPU) when a task holds several n = 128 instances (docs/cluster.md).
#SBATCH --job-name=basis-lab-zoo
#SBATCH --cpus-per-task=1
#SBATCH --mem-per-cpu=1G
#SBATCH --time=24:00:00
#SBATCH --output=basis-lab-zoo-%A_%a.out
set -euo pipefail

if [ $# -lt 2 ] || [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
    echo "usage: sbatch --array=0-<N-1> $0 PRESET OUT [zoo options...]" >&2
    exit 2
fi
preset=$1
out=$2
shift 2
first=${SLURM_ARRAY_TASK_MIN:?}
count=${SLURM_ARRAY_TASK_COUNT:?}
if [ "${SLURM_ARRAY_TASK_STEP:-1}" != 1 ] || [ $((SLURM_ARRAY_TASK_MAX - first + 1)) != "$count" ]; then
    echo "error: the array must be one contiguous range such as --array=0-$((count - 1))" >&2
    exit 2
fi
index=$((SLURM_ARRAY_TASK_ID - first))
mkdir -p "$out"
exec "${BASIS_LAB:-basis-lab}" zoo "$preset" "$@" \
    --shard "$index/$count" \
    --threads "${SLURM_CPUS_PER_TASK:-1}" \
    --quiet \
    --out "$out/shard-$index"
