#!/usr/bin/env bash
# Spread a large parsim sweep over a Slurm job array, then merge the shards into one ranking.
#   sbatch --array=0-63 examples/sweep-slurm-array.sh          # 64 shards, one per array task
#   build/parsim merge sweep-shard-*.json --top 20             # after all tasks finished
# Each task evaluates a deterministic 1/N of the plan space (--shard i/N); the merged ranking is identical to an
# unsharded sweep, whatever N and however many threads each task used.
#SBATCH --job-name=parsim-sweep
#SBATCH --cpus-per-task=16
#SBATCH --time=00:30:00
set -euo pipefail
N=${SLURM_ARRAY_TASK_COUNT:?run under sbatch --array}
i=${SLURM_ARRAY_TASK_ID:?}
build/parsim sweep --model llama3-405b --gpus 16384 --gpu h100 --gbs 2048 \
  --threads "${SLURM_CPUS_PER_TASK:-1}" --shard "$i/$N" --all --format json > "sweep-shard-$i.json"
