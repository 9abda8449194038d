#!/usr/bin/env bash
# attnsim-cli bench and PyTorch 1.13 on the article's shape (B=32, T=128, d=512, h=8), one
# after the other, on the same cores; repeated in rounds because these machines are noisy.
# Prints each round's medians and the median ratio, and attnsim's GEMM floor (bench --floor:
# the pass's matrix products alone) with the share of the pass it is. Needs python3-torch
# (installed if root).
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
  ratios=(); shares=()
  for ((r = 1; r <= rounds; r++)); do
    json=$("$cli" bench --repeats 20 --floor --json $flags)
    ours=$(sed 's/.*"median_ms": \([0-9.]*\).*/\1/' <<<"$json")
    floor=$(sed 's/.*"floor_ms": \([0-9.]*\).*/\1/' <<<"$json")
    torch=$(OPENBLAS_CORETYPE=$kernels /usr/bin/python3 tools/bench_torch.py 32 128 512 8 "$threads" 20 "$mode")
    ratio=$(awk -v a="$torch" -v b="$ours" 'BEGIN { printf "%.2f", a / b }')
    ratios+=("$ratio"); shares+=("$(awk -v f="$floor" -v p="$ours" 'BEGIN { printf "%.0f", 100 * f / p }')")
    echo "$mode round $r: attnsim ${ours} ms (GEMM floor ${floor} ms)   pytorch ${torch} ms   pytorch/attnsim ${ratio}x"
  done
  printf '%s\n' "${ratios[@]}" | sort -n | awk -v m="$mode" '{ a[NR] = $1 } END { printf "%s median ratio: %sx", m, a[int((NR + 1) / 2)] }'
  printf '%s\n' "${shares[@]}" | sort -n | awk '{ a[NR] = $1 } END { print "; the GEMM floor is " a[int((NR + 1) / 2)] "% of the pass (median)" }'
done
