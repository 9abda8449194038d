#!/usr/bin/env bash
# GPT-2 small (124M, random weights of its shapes, written once as a safetensors folder by
# tools/bench_hf_torch.py) on 64 tokens: attnsim-cli bench-model (every layer through the
# engine, one layer's every intermediate kept) against PyTorch 1.13 running the same
# architecture, in rounds on the same cores. Prints each round's medians and the median ratio,
# for the kernel set attnsim picks and then for each set named in $CORETYPES (both sides get
# the same one through OPENBLAS_CORETYPE; bench-common.sh says why), and attnsim's GEMM floor
# (the pass's matrix products alone, bench-model --floor) with the share of the pass it is.
# The weights are drawn as GPT-2 initialises them (bench_hf_torch.gpt2_init_params).
#   ROUNDS=5 CORETYPES="Prescott Haswell" tools/bench-hf-vs-torch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
T=${TOKENS:-64}
dir=${GPT2_DIR:-/tmp/attnsim-gpt2-small-init}
unset OPENBLAS_CORETYPE  # each side is told its kernels below
source tools/bench-common.sh
[[ -f $dir/model.safetensors ]] || /usr/bin/python3 tools/bench_hf_torch.py write "$dir"
for core in "$kernels" ${CORETYPES:-Prescott Haswell}; do
  ratios=()
  ours_all=()
  torch_all=()
  floors=()
  for ((r = 1; r <= rounds; r++)); do
    json=$(OPENBLAS_CORETYPE=$core "$cli" bench-model --model "$dir" --length "$T" --layer 5 --repeats 10 --floor --json)
    ours=$(sed 's/.*"median_ms": \([0-9.]*\).*/\1/' <<<"$json")
    floor=$(sed 's/.*"floor_ms": \([0-9.]*\).*/\1/' <<<"$json")
    torch=$(OPENBLAS_CORETYPE=$core /usr/bin/python3 tools/bench_hf_torch.py time "$dir" "$T" 10)
    ratio=$(awk -v a="$torch" -v b="$ours" 'BEGIN { printf "%.2f", a / b }')
    ratios+=("$ratio"); ours_all+=("$ours"); torch_all+=("$torch"); floors+=("$floor")
    echo "$core round $r: attnsim ${ours} ms (GEMM floor ${floor} ms)   pytorch ${torch} ms   pytorch/attnsim ${ratio}x"
  done
  med() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
  share=$(awk -v f="$(med "${floors[@]}")" -v p="$(med "${ours_all[@]}")" 'BEGIN { printf "%.0f", 100 * f / p }')
  echo "$core: attnsim median $(med "${ours_all[@]}") ms, pytorch median $(med "${torch_all[@]}") ms, ratio median $(med "${ratios[@]}")x;" \
       "GEMM floor median $(med "${floors[@]}") ms ($share% of the pass)"
done
