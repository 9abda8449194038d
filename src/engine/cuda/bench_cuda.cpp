// attnsim-cuda-bench: the timings tools/gpu-check.sh prints (medians, CUDA events).
//
//   article   B=32 T=128 d=512 h=8, the standard path on the CUDA backend:
//             "trace"  = forward() with every step copied to the host (what the app sees)
//             "device" = the same ops with copy-back off, only `out` fetched
//             "cuda_forward keep {out}" = forward() itself, only `out` copied down
//   standard  B=1 T=4096 d=512 h=8: q·kᵀ, scale+mask+softmax, alpha·v on the device
//   flash     B=1 T=4096 and 16384 d=512 h=8: the flash kernel alone (q, k, v already on
//             the device as transposed head views of (B,T,d) projections)
//
// Usage: attnsim-cuda-bench [--json] [--quick]
// With --json every result is one line {"name", "ms", "tflops", ...} for the script.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../error.h"
#include "../mha.h"
#include "cuda_backend.h"
#include "kernels.h"

using namespace attnsim;

namespace {

bool g_json = false;

void report(const std::string& name, double ms, double flops, const std::string& extra = "") {
  const double tflops = ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0;
  if (g_json)
    std::printf("{\"name\": \"%s\", \"ms\": %.4f, \"tflops\": %.3f%s%s}\n", name.c_str(), ms,
                tflops, extra.empty() ? "" : ", ", extra.c_str());
  else
    std::printf("%-44s %10.3f ms  %8.2f TFLOP/s  %s\n", name.c_str(), ms, tflops, extra.c_str());
  std::fflush(stdout);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

// [SECTION] the article's shape through the backend

struct ArticleCtx {
  MhaConfig config;
  MhaWeights weights;
  MhaInputs inputs;
};

void article_trace(void* p) {
  auto* c = static_cast<ArticleCtx*>(p);
  const ForwardResult r = forward(c->config, c->weights, c->inputs, cuda_backend());
  (void)r;
}

// The forward pass's ops in order, nothing copied down but `out`.
void article_device(void* p) {
  auto* c = static_cast<ArticleCtx*>(p);
  Backend& be = cuda_backend();
  const int64_t B = c->config.batch, T = c->config.tq, d = c->config.d_model,
                h = c->config.heads, dk = d / h;
  cuda_set_copy_back(false);
  const MhaWeights& w = c->weights;
  const Tensor q = be.linear(c->inputs.query, w.W_Q.weight, w.W_Q.bias);  // (B,T,d)
  const Tensor k = be.linear(c->inputs.key, w.W_K.weight, w.W_K.bias);
  const Tensor v = be.linear(c->inputs.value, w.W_V.weight, w.W_V.bias);
  const Tensor qh = q.view({B, T, h, dk}).transpose(1, 2);  // (B,h,T,dk) view
  const Tensor kh = k.view({B, T, h, dk}).transpose(1, 2);
  const Tensor vh = v.view({B, T, h, dk}).transpose(1, 2);
  const Tensor s = be.qk(qh, kh);  // (B,h,T,T)
  SoftmaxSpec spec;
  spec.scale = 1.0f / std::sqrt(static_cast<float>(dk));
  const SoftmaxSteps sm = be.scale_mask_softmax(s, spec);
  const Tensor ctx = be.av(sm.alpha, vh);                                // (B,h,T,dk)
  const Tensor cc = be.contiguous(ctx.transpose(1, 2)).view({B, T, d});  // (B,T,d)
  const Tensor out = be.linear(cc, w.W_O.weight, w.W_O.bias);
  cuda_set_copy_back(true);
  cuda_fetch(out);
}

// [SECTION] flash and the standard core on device buffers

struct CoreCtx {
  cudak::FlashArgs flash;
  Tensor qh, kh, vh;  // host head views with device mirrors (standard path)
  SoftmaxSpec spec;
};

void flash_kernel(void* p) {
  auto* c = static_cast<CoreCtx*>(p);
  cudak::flash_forward(c->flash, 0);
}

void standard_core(void* p) {
  auto* c = static_cast<CoreCtx*>(p);
  Backend& be = cuda_backend();
  cuda_set_copy_back(false);
  const Tensor s = be.qk(c->qh, c->kh);
  const SoftmaxSteps sm = be.scale_mask_softmax(s, c->spec);
  const Tensor ctx = be.av(sm.alpha, c->vh);
  cuda_set_copy_back(true);
}

void bench_core(int64_t T, bool with_standard, int reps) {
  const int64_t B = 1, d = 512, h = 8, dk = 64;
  const size_t n = static_cast<size_t>(B * T * d);
  std::vector<float> host(n);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float* dev[3] = {nullptr, nullptr, nullptr};
  float* out = nullptr;
  for (float*& p : dev) {
    for (float& x : host) x = normal(rng);
    check(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(float)), "malloc");
    check(cudaMemcpy(p, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), "copy");
  }
  check(cudaMalloc(reinterpret_cast<void**>(&out), n * sizeof(float)), "malloc");
  CoreCtx c;
  cudak::FlashArgs& a = c.flash;
  // q, k, v: (B,T,d) projections seen as heads (B,h,T,dk): strides (T·d, dk, d, 1)
  const int64_t strides[4] = {T * d, dk, d, 1};
  a.q = dev[0];
  a.k = dev[1];
  a.v = dev[2];
  for (int i = 0; i < 4; ++i) a.qs[i] = a.ks[i] = a.vs[i] = strides[i];
  a.out = out;
  a.B = B;
  a.H = h;
  a.Tq = a.Tk = T;
  a.dk = dk;
  a.scale = 1.0f / std::sqrt(static_cast<float>(dk));
  a.block_q = a.block_k = 64;
  const double flops = 4.0 * B * h * T * T * dk;  // q·kᵀ and p·v
  const int version = cudak::flash_v2_fits(a) ? 2 : 1;
  const double ms = cuda_time_ms(flash_kernel, &c, 2, reps);
  report("flash v" + std::to_string(version) + " B=1 T=" + std::to_string(T) + " d=512 h=8", ms,
         flops, g_json ? "\"kind\": \"flash\", \"T\": " + std::to_string(T) : "");
  if (T <= 4096) {  // causal: half the tiles are skipped
    a.mask.causal = true;
    const double msc = cuda_time_ms(flash_kernel, &c, 2, reps);
    report("flash v" + std::to_string(version) + " causal B=1 T=" + std::to_string(T), msc,
           flops / 2, g_json ? "\"kind\": \"flash_causal\", \"T\": " + std::to_string(T) : "");
    a.mask.causal = false;
  }
  check(cudaFree(out), "free");
  for (float* p : dev) check(cudaFree(p), "free");

  if (with_standard) {
    // the standard core through the backend: S, scaled, alpha (B,h,T,T) on the device
    Backend& be = cuda_backend();
    std::vector<float> x(n);
    for (float& e : x) e = normal(rng);
    Tensor eye = Tensor::zeros({d, d});
    for (int64_t i = 0; i < d; ++i) eye.f32()[i * d + i] = 1.0f;
    cuda_set_copy_back(false);
    const Tensor xt = Tensor::from_values({B, T, d}, x);
    const Tensor proj = be.linear(xt, eye, Tensor());  // (B,T,d), lives on the device
    cuda_set_copy_back(true);
    c.qh = c.kh = c.vh = proj.view({B, T, h, dk}).transpose(1, 2);
    c.spec.scale = a.scale;
    const double mss = cuda_time_ms(standard_core, &c, 1, std::max(3, reps / 2));
    report("standard core B=1 T=" + std::to_string(T) + " d=512 h=8", mss, flops,
           g_json ? "\"kind\": \"standard\", \"T\": " + std::to_string(T) : "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) g_json = true;
    else if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else {
      std::fprintf(stderr, "usage: attnsim-cuda-bench [--json] [--quick]\n");
      return 2;
    }
  }
  try {
    std::string why;
    if (!cuda_device_present(&why)) {
      std::fprintf(stderr, "attnsim-cuda-bench: %s\n", why.c_str());
      return 2;
    }
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "device properties");
    if (!g_json) std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
    const int reps = quick ? 5 : 20;

    ArticleCtx art;
    art.config.batch = 32;
    art.config.tq = art.config.tk = 128;
    art.config.d_model = 512;
    art.config.heads = 8;
    art.config.seed = 1;
    art.weights = init_weights(512, true, 1);
    art.inputs = random_inputs(art.config);
    // 4 projections 2·B·T·d·d each, q·kᵀ and alpha·v 2·B·h·T·T·dk each
    const double art_flops = 4 * 2.0 * 32 * 128 * 512 * 512 + 2 * 2.0 * 32 * 8 * 128 * 128 * 64;
    report("article B=32 T=128 d=512 h=8, device, out only", cuda_time_ms(article_device, &art, 2, reps),
           art_flops, g_json ? "\"kind\": \"article_device\"" : "");
    report("article B=32 T=128 d=512 h=8, cuda_forward keep {out}",
           cuda_time_ms([](void* p) {
             auto* c = static_cast<ArticleCtx*>(p);
             (void)cuda_forward(c->config, c->weights, c->inputs, {"out"});
           }, &art, 1, std::max(3, reps / 4)),
           art_flops, g_json ? "\"kind\": \"article_forward_out\"" : "");
    report("article B=32 T=128 d=512 h=8, every step on host",
           cuda_time_ms(article_trace, &art, 1, std::max(3, reps / 4)), art_flops,
           g_json ? "\"kind\": \"article_trace\"" : "");

    bench_core(4096, true, reps);
    bench_core(16384, false, quick ? 3 : 10);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnsim-cuda-bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
