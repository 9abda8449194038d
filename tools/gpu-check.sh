#!/usr/bin/env bash
# The GPU check in one command (issue 6): on a machine with an NVIDIA GPU, nvcc and cuBLAS,
#   1. configures and builds a CUDA build (build-gpu-check/, only the targets it needs),
#   2. runs the CPU <-> CUDA parity tests (ctest -L cuda; they must pass, not skip),
#   3. runs attnsim-cuda-bench: the article's shape (B=32 T=128 d=512 h=8), the standard core
#      and the flash kernel at T=4096 and 16384 (B=1 d=512 h=8),
#   4. when python3 can import torch with CUDA, times PyTorch's scaled_dot_product_attention
#      (and the article's module) on the same GPU and shapes, and prints the ratios.
# Sized to finish within 5 minutes on one H200. Environment:
#   BUILD=dir            build folder (default build-gpu-check)
#   ATTNSIM_CUDA_ARCHS   e.g. 90-real (default: the GPU's own, from nvidia-smi; else 90-real)
#   JOBS=n               parallel build jobs (default nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build-gpu-check}
jobs=${JOBS:-$(nproc)}
t0=$(date +%s)
export NVIDIA_TF32_OVERRIDE=0  # float32 everywhere (cuBLAS and PyTorch): what the parity rule assumes
say() { printf '[gpu-check %3ds] %s\n' $(($(date +%s) - t0)) "$*"; }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU visible here (nvidia-smi); run this on a GPU machine" >&2
  exit 2
fi
nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader
if [[ -z ${ATTNSIM_CUDA_ARCHS:-} ]]; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
  ATTNSIM_CUDA_ARCHS=${cap:+${cap}-real}
  ATTNSIM_CUDA_ARCHS=${ATTNSIM_CUDA_ARCHS:-90-real}
fi
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

# [1] build -----------------------------------------------------------------------------
say "configure ($build, archs $ATTNSIM_CUDA_ARCHS)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DATTNSIM_CUDA=ON -DATTNSIM_GUI=OFF \
      -DATTNSIM_CUDA_ARCHS="$ATTNSIM_CUDA_ARCHS" -DBUILD_TESTING=ON >"$build.configure.log" 2>&1 \
  || { tail -30 "$build.configure.log"; echo "gpu-check: configure failed" >&2; exit 1; }
say "build"
cmake --build "$build" -j"$jobs" --target attnsim-cli attnsim-cuda-tests attnsim-cuda-bench \
      >"$build.build.log" 2>&1 \
  || { grep -E "error|Error" -A3 "$build.build.log" | head -40; echo "gpu-check: build failed" >&2; exit 1; }

# [2] parity ------------------------------------------------------------------------------
say "parity tests (ctest -L cuda)"
set +e
ctest --test-dir "$build" -L cuda --output-on-failure --timeout 120 2>&1 | tee "$build/parity.log" | tail -25
parity=${PIPESTATUS[0]}
set -e
skipped=$(grep -c "(Skipped)" "$build/parity.log" || true)
if ((parity != 0)); then echo "gpu-check: PARITY FAILED"; fi
if ((skipped > 0)); then
  echo "gpu-check: $skipped CUDA tests were SKIPPED although a GPU is present"
  parity=1
fi

# [3] our timings -------------------------------------------------------------------------
say "attnsim-cuda-bench"
"$build/attnsim-cuda-bench"
"$build/attnsim-cuda-bench" --json --quick >"$build/bench.json"

# [4] PyTorch on the same GPU ---------------------------------------------------------------
if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() and hasattr(torch.nn.functional, 'scaled_dot_product_attention') else 1)" 2>/dev/null; then
  say "PyTorch scaled_dot_product_attention on the same GPU"
  python3 - "$build/bench.json" <<'PY'
import json, math, statistics, sys
import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False   # float32 math, as attnsim
torch.backends.cudnn.allow_tf32 = False
ours = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    ours[(r.get("kind"), r.get("T"))] = r["ms"]

def median_ms(fn, reps=20, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)

def heads(B, T, h, dk):  # (B,h,T,dk) transposed views of (B,T,d), as attnsim's q_heads
    return torch.randn(B, T, h * dk, device="cuda").view(B, T, h, dk).transpose(1, 2)

print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
rows = []
with torch.no_grad():
    for T in (4096, 16384):
        q, k, v = (heads(1, T, 8, 64) for _ in range(3))
        t = median_ms(lambda: F.scaled_dot_product_attention(q, k, v), reps=10 if T > 4096 else 20)
        rows.append((f"flash B=1 T={T} d=512 h=8", ours.get(("flash", T)), t))
        if T == 4096:
            tc = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
            rows.append((f"flash causal B=1 T={T}", ours.get(("flash_causal", T)), tc))
            def standard():
                a = torch.softmax(q @ k.transpose(-2, -1) / 8.0, dim=-1)
                return a @ v
            rows.append((f"standard core B=1 T={T} (torch: matmul+softmax)", ours.get(("standard", T)), median_ms(standard)))

    class Attention(torch.nn.Module):  # the article's module
        def __init__(self, d, h):
            super().__init__()
            self.h, self.dk = h, d // h
            self.proj = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(4))
        def forward(self, x, sdpa):
            b, t, d = x.shape
            q, k, v = (p(x).view(b, t, self.h, self.dk).transpose(1, 2) for p in self.proj[:3])
            if sdpa:
                ctx = F.scaled_dot_product_attention(q, k, v)
            else:
                ctx = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dk), dim=-1) @ v
            return self.proj[3](ctx.transpose(1, 2).contiguous().view(b, t, d))
    m = Attention(512, 8).cuda().eval()
    x = torch.randn(32, 128, 512, device="cuda")
    rows.append(("article B=32 T=128 d=512 h=8 (torch module)", ours.get(("article_device", None)), median_ms(lambda: m(x, False))))
    rows.append(("article B=32 T=128 d=512 h=8 (torch module + SDPA)", ours.get(("article_device", None)), median_ms(lambda: m(x, True))))

print(f"{'shape':58s} {'attnsim ms':>11s} {'torch ms':>9s} {'attnsim/torch':>14s}")
for name, a, t in rows:
    ratio = f"{a / t:.2f}x" if a else "-"
    print(f"{name:58s} {a if a else float('nan'):11.3f} {t:9.3f} {ratio:>14s}")
goal = [r for r in rows if r[0].startswith("flash B=1 T=4096")]
if goal and goal[0][1]:
    r = goal[0][1] / goal[0][2]
    print(f"goal (flash within 2x of SDPA at T=4096, float32): {'MET' if r <= 2 else 'NOT MET'} ({r:.2f}x)")
PY
else
  say "PyTorch with CUDA and scaled_dot_product_attention not importable here: no comparison"
fi
say "done"
exit "$parity"
