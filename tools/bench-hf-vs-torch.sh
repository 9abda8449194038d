#!/usr/bin/env bash
# GPT-2 small (124M, random weights of its shapes, written once as a safetensors folder by
# tools/bench_hf_torch.py) on 64 tokens: attnsim-cli bench-model (every layer through the
# engine, one layer's every intermediate kept) against PyTorch 1.13 running the same
# architecture, in rounds on the same cores. Prints each round's medians and the median ratio,
# for the kernel set attnsim picks and then for each set named in $CORETYPES (both sides get
# the same one through OPENBLAS_CORETYPE; bench-common.sh says why).
#   ROUNDS=5 CORETYPES="Prescott Haswell" tools/bench-hf-vs-torch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
T=${TOKENS:-64}
dir=${GPT2_DIR:-/tmp/attnsim-gpt2-small-random}
unset OPENBLAS_CORETYPE  # each side is told its kernels below
source tools/bench-common.sh
[[ -f $dir/model.safetensors ]] || /usr/bin/python3 tools/bench_hf_torch.py write "$dir"
for core in "$kernels" ${CORETYPES:-Prescott Haswell}; do
  ratios=()
  ours_all=()
  torch_all=()
  for ((r = 1; r <= rounds; r++)); do
    ours=$(OPENBLAS_CORETYPE=$core build/attnsim-cli bench-model --model "$dir" --length "$T" --layer 5 --repeats 10 --json |
           sed 's/.*"median_ms": \([0-9.]*\).*/\1/')
    torch=$(OPENBLAS_CORETYPE=$core /usr/bin/python3 tools/bench_hf_torch.py time "$dir" "$T" 10)
    ratio=$(awk -v a="$torch" -v b="$ours" 'BEGIN { printf "%.2f", a / b }')
    ratios+=("$ratio"); ours_all+=("$ours"); torch_all+=("$torch")
    echo "$core round $r: attnsim ${ours} ms   pytorch ${torch} ms   pytorch/attnsim ${ratio}x"
  done
  med() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
  echo "$core: attnsim median $(med "${ours_all[@]}") ms, pytorch median $(med "${torch_all[@]}") ms, ratio median $(med "${ratios[@]}")x"
done
