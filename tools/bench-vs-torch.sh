#!/usr/bin/env bash
# attnsim-cli bench and PyTorch 1.13 on the article's shape (B=32, T=128, d=512, h=8), one
# after the other, on the same cores; repeated in rounds because these machines are noisy.
# Prints each round's medians and the median ratio. Needs python3-torch (installed if root).
#
# Both get the same BLAS kernels: PyTorch's OpenBLAS (Debian's libblas.so.3) picks its kernel
# set by CPU model exactly as attnsim's does, and falls back to Prescott (SSE3) on a CPU newer
# than itself. attnsim corrects that in process (docs/benchmarks.md, "BLAS kernels"); PyTorch cannot, so
# it runs with OPENBLAS_CORETYPE set to the set attnsim-cli reports using. An
# OPENBLAS_CORETYPE you export yourself applies to both.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
threads=$(nproc)
source tools/bench-common.sh
echo "BLAS kernels for both: $kernels (attnsim-cli --version says why)"
# eval: no dropout (torch under no_grad); train: dropout 0.1 (torch as constructed, autograd on)
for mode in eval train; do
  flags=""
  [[ $mode == train ]] && flags="--train --dropout 0.1"
  ratios=()
  for ((r = 1; r <= rounds; r++)); do
    ours=$(build/attnsim-cli bench --repeats 20 --json $flags | sed 's/.*"median_ms": \([0-9.]*\).*/\1/')
    torch=$(OPENBLAS_CORETYPE=$kernels /usr/bin/python3 tools/bench_torch.py 32 128 512 8 "$threads" 20 "$mode")
    ratio=$(awk -v a="$torch" -v b="$ours" 'BEGIN { printf "%.2f", a / b }')
    ratios+=("$ratio")
    echo "$mode round $r: attnsim ${ours} ms   pytorch ${torch} ms   pytorch/attnsim ${ratio}x"
  done
  printf '%s\n' "${ratios[@]}" | sort -n | awk -v m="$mode" '{ a[NR] = $1 } END { print m " median ratio: " a[int((NR + 1) / 2)] "x" }'
done
