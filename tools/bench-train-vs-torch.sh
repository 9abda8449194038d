#!/usr/bin/env bash
# One training step of the default tiny transformer (2 attention-only layers, 4 heads,
# d_model 64, 65 tokens, T = 48, batch 32, AdamW): `attnsim-cli train --bench` and the same
# model in PyTorch 1.13 (tools/bench_train_torch.py), one after the other on the same cores,
# in rounds; prints each round's medians and the median ratio. PyTorch's OpenBLAS gets the
# kernel set attnsim uses (see bench-vs-torch.sh). Needs python3-torch (installed if root).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
steps=${STEPS:-40}
threads=${THREADS:-$(nproc)}  # THREADS=1: both on one core (fairer on a loaded machine)
source tools/bench-common.sh
# both pinned to the same cores: attnsim sizes its pool from its CPU affinity, PyTorch is told
pin=(taskset -c "0-$((threads - 1))")
echo "BLAS kernels for both: $kernels; $threads threads; median of $steps steps per round"
ratios=()
for ((r = 1; r <= rounds; r++)); do
  ours=$(OPENBLAS_NUM_THREADS=$threads "${pin[@]}" "$cli" train --bench "$steps" --json | sed 's/.*"median_ms": \([0-9.]*\).*/\1/')
  torch=$(OPENBLAS_CORETYPE=$kernels "${pin[@]}" /usr/bin/python3 tools/bench_train_torch.py "$steps" "$threads")
  ratio=$(awk -v a="$torch" -v b="$ours" 'BEGIN { printf "%.2f", a / b }')
  ratios+=("$ratio")
  echo "round $r: attnsim ${ours} ms/step   pytorch ${torch} ms/step   pytorch/attnsim ${ratio}x"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { print "median ratio: " a[int((NR + 1) / 2)] "x" }'
