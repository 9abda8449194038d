#!/usr/bin/env bash
# Models by their Hub names, at the sizes people pull (issue 39): tests/hub/mock_hub.py stands in
# for the Hugging Face Hub on 127.0.0.1 and serves random-weight folders of three real models'
# shapes (tools/make_hub_folders.py, made once into $HUB_FOLDERS) as openai-community/gpt2
# (GPT-2 small, F32), HuggingFaceTB/SmolLM-135M (BF16) and Qwen/Qwen2-0.5B (BF16). For each
# model, ROUNDS times, each round with a fresh empty HF_HUB_CACHE:
#   pull    attnsim-cli pull ORG/NAME: wall time and MB/s (model info, the CDN redirect, the
#           download, its sha256 check, the cache layout); over loopback, so this is attnsim's
#           own cost, not a network's
#   open    offline from that cache (HF_HUB_OFFLINE=1): predict on a short text = resolve the
#           name, read config, tokenizer and weights, one forward pass; wall time
#   decode  decode --steps DECODE_STEPS (default 32) over the KV cache: tokens per second of the
#           one-token steps, from the steps' own ms in decode --json (the prefill left out)
# then prints each one's median in one table, with the decode's GEMM floor (bench-model --floor:
# one step's matrix products alone, as tokens per second; once per model). HUB_SCALE=small runs the same on tiny sizes, as a
# check in seconds. Nothing leaves 127.0.0.1.
#   ROUNDS=3 tools/bench-hub.sh        HUB_SCALE=small ROUNDS=1 tools/bench-hub.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
scale=${HUB_SCALE:-full}
steps=${DECODE_STEPS:-32}
cli=${ATTNSIM_CLI:-build/attnsim-cli}  # another build's: ATTNSIM_CLI=build-x/attnsim-cli
folders=${HUB_FOLDERS:-/tmp/attnsim-hub-folders/$scale}
prompt="The quick brown fox jumps over the lazy dog"
models=(gpt2 smollm qwen2)
declare -A name=([gpt2]=openai-community/gpt2 [smollm]=HuggingFaceTB/SmolLM-135M [qwen2]=Qwen/Qwen2-0.5B)

for m in "${models[@]}"; do  # the script writes config.json last, so a folder with one is whole
  [[ -f $folders/$m/config.json ]] || /usr/bin/python3 tools/make_hub_folders.py "$folders" --scale "$scale" --only "$m"
done

# Loopback only, as anyone: no token, no proxy, no cache but each round's own.
unset HF_TOKEN HF_HOME HF_HUB_OFFLINE http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export NO_PROXY='*'
work=$(mktemp -d /tmp/attnsim-bench-hub.XXXXXX)
served=()
for m in "${models[@]}"; do served+=("${name[$m]}=$folders/$m"); done
/usr/bin/python3 tests/hub/mock_hub.py "${served[@]}" >"$work/port" &
hub=$!
trap 'kill "$hub" 2>/dev/null || true; wait "$hub" 2>/dev/null || true; rm -rf "$work"' EXIT
until [[ -s $work/port ]]; do  # it reads and hashes every file before it prints its port
  kill -0 "$hub" 2>/dev/null || { echo "bench-hub: the mock hub did not start" >&2; exit 1; }
  sleep 0.2
done
HF_ENDPOINT=http://127.0.0.1:$(<"$work/port")
export HF_ENDPOINT
export HF_HUB_CACHE=$work/cache

now() { date +%s.%N; }
med() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
tokens_per_s() {  # decode --json on stdin: the one-token steps (all but the prefill) per second
  /usr/bin/python3 -c 'import json, sys
s = json.load(sys.stdin)["steps"][1:]
print("%.2f" % (1000 * len(s) / sum(x["ms"] for x in s)))'
}

table=()
for m in "${models[@]}"; do
  n=${name[$m]}
  mb=$(stat -c %s "$folders/$m"/* | awk '{ s += $1 } END { printf "%.1f", s / 1e6 }')
  pulls=(); rates=(); opens=(); decodes=()
  for ((r = 1; r <= rounds; r++)); do
    rm -rf "$HF_HUB_CACHE"
    t0=$(now)
    "$cli" pull "$n" >/dev/null
    t1=$(now)
    HF_HUB_OFFLINE=1 "$cli" predict --model "$n" --text "$prompt" --top-k 1 >/dev/null
    t2=$(now)
    tps=$(HF_HUB_OFFLINE=1 "$cli" decode --model "$n" --text "$prompt" --steps "$steps" --json | tokens_per_s)
    pull=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    rate=$(awk -v a="$t0" -v b="$t1" -v mb="$mb" 'BEGIN { printf "%.1f", mb / (b - a) }')
    open=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }')
    pulls+=("$pull"); rates+=("$rate"); opens+=("$open"); decodes+=("$tps")
    echo "$n round $r: pull $pull s ($rate MB/s)   open $open s   decode $tps tokens/s"
  done
  floor=$("$cli" bench-model --model "$folders/$m" --text "$prompt" --repeats 1 --decode "$steps" --floor --json |
          sed 's/.*"decode_floor_tokens_per_s": \([0-9.]*\).*/\1/')
  table+=("$(printf '%-28s %8s %8s %10s %8s %14s %14s' "$n" "$mb" "$(med "${pulls[@]}")" "$(med "${rates[@]}")" \
             "$(med "${opens[@]}")" "$(med "${decodes[@]}")" "$floor")")
done
rm -rf "$HF_HUB_CACHE"

echo
echo "medians of $rounds rounds ($scale scale; decode: $steps steps after a ${#prompt}-character prompt)"
printf '%-28s %8s %8s %10s %8s %14s %14s\n' model MB "pull s" "pull MB/s" "open s" "decode tok/s" "floor tok/s"
printf '%s\n' "${table[@]}"
