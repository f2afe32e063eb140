#!/usr/bin/env bash
# Submits a zoo sweep as a SLURM job array of TASKS shards (scripts/slurm/zoo-array.sh) and a
# merge job that starts once every shard has succeeded (docs/cluster.md):
#
#   scripts/slurm/submit-zoo.sh [--wait] PRESET OUT TASKS [zoo options...]
#
# The merged zoo.csv, zoo.md and zoo.json land in OUT, each shard in OUT/shard-i, the jobs' logs
# in OUT/slurm-*.out. With --wait the script returns when the merge has finished, with its exit
# status. BASIS_LAB names the program (default: basis-lab on the PATH).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
wait=()
if [ "${1:-}" = --wait ]; then
    wait=(--wait)
    shift
fi
if [ $# -lt 3 ] || ! [ "$3" -ge 1 ] 2>/dev/null; then
    echo "usage: $0 [--wait] PRESET OUT TASKS [zoo options...]" >&2
    exit 2
fi
preset=$1
tasks=$3
mkdir -p "$2"
out=$(cd "$2" && pwd)
shift 3
bin=${BASIS_LAB:-basis-lab}

array=$(sbatch --parsable --array="0-$((tasks - 1))" --output="$out/slurm-%A_%a.out" \
    "$here/zoo-array.sh" "$preset" "$out" "$@")
array=${array%%;*}
echo "submitted job array $array: $tasks shards of $preset into $out/shard-*"
# The job's shell expands shard-*: only the names are quoted.
merge=$(printf '%q merge %q/shard-* --out %q' "$bin" "$out" "$out")
sbatch --parsable "${wait[@]}" --dependency="afterok:$array" --job-name=basis-lab-merge \
    --output="$out/slurm-merge-%j.out" --wrap "$merge"
