// The CUDA backend adapter: host tensors in and out, device mirrors, cuBLAS, the kernels of
// kernels.h. See cuda_backend.h for the memory model. Compiled by the host compiler into
// libattnsim_cuda.so with the kernels, cudart and cuBLAS; the engine loads that module only
// when the CUDA backend is asked for (backend_registry.cpp), so a program that never asks
// never maps the CUDA runtime. Engine symbols resolve against the program (--export-dynamic).
//
// [SECTION] errors and device buffers
// [SECTION] CudaBackend: mirrors
// [SECTION] CudaBackend: ops
// [SECTION] flash, timing, public functions
#include "cuda_backend.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../error.h"
#include "gemm_plan.h"
#include "kernels.h"

namespace attnsim {

// [SECTION] errors and device buffers
namespace {

void check(cudaError_t err, const std::string& what) {
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear a sticky launch error so the next call can report its own
    throw Error("CUDA: " + what + ": " + cudaGetErrorString(err));
  }
}

const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "invalid value";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "architecture mismatch";
    case CUBLAS_STATUS_MAPPING_ERROR: return "mapping error";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "execution failed";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "internal error";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "not supported";
    default: return "error";
  }
}

void check(cublasStatus_t s, const std::string& what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw Error("cuBLAS: " + what + ": " + cublas_status_name(s));
}

// Runs a launcher from kernels.h, turning its std::runtime_error into the engine's Error.
template <class Fn>
auto kernel_call(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::runtime_error& e) {
    throw Error(e.what());
  }
}

// One device allocation, freed with its last owner.
class DevBuf {
 public:
  explicit DevBuf(int64_t bytes) : bytes_(bytes) {
    if (bytes <= 0) return;
    const cudaError_t err = cudaMalloc(&ptr_, static_cast<size_t>(bytes));
    if (err != cudaSuccess) {
      cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      throw Error("CUDA: cannot allocate " + std::to_string(bytes) + " bytes on the device (" +
                  std::to_string(free_b) + " of " + std::to_string(total_b) + " bytes free): " +
                  cudaGetErrorString(err));
    }
  }
  ~DevBuf() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  void* get() const { return ptr_; }
  int64_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  int64_t bytes_ = 0;
};
using DevPtr = std::shared_ptr<DevBuf>;

// A tensor's element (0,...,0) on the device, and what keeps that memory alive.
struct DevRef {
  const std::byte* base = nullptr;  // device address of element (0,...,0)
  DevPtr hold;
  const float* f32() const { return reinterpret_cast<const float*>(base); }
  const uint8_t* b8() const { return reinterpret_cast<const uint8_t*>(base); }
};

bool g_copy_back = true;
int g_softmax_version = 0;
int g_last_softmax_version = 0;

}  // namespace

// [SECTION] CudaBackend: mirrors
class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    check(cublasCreate(&blas_), "cublasCreate");
    // float32 products in float32 (no TF32 tensor cores): the parity tolerance assumes it
    check(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  }
  ~CudaBackend() override {
    mirrors_.clear();
    if (blas_ != nullptr) cublasDestroy(blas_);
  }

  std::string name() const override { return "cuda"; }
  Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) override;
  Tensor qk(const Tensor& q, const Tensor& k) override;
  SoftmaxSteps scale_mask_softmax(const Tensor& scores, const SoftmaxSpec& spec) override;
  Tensor dropout(const Tensor& alpha, float p, uint64_t seed) override;
  Tensor av(const Tensor& alpha, const Tensor& v) override;
  Tensor contiguous(const Tensor& x) override;
  FlashCoreResult flash_core(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMask& mask,
                             float scale, const FlashOptions& options) override;

  struct FlashRun {
    Tensor out;                 // (B,h,Tq,dk)
    Tensor m, l;                // (B,h,Tq)
    Tensor tile_max, tile_sum;  // (B,h,Tq,nkb) with record
    Tensor scores, probs;       // (B,h,Tq,Tk) with record: S and P cells of the visited tiles
    Tensor acc;                 // (B,h,Tq,nkb,dk) with record
    int version = 0;
  };
  FlashRun flash(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMask& mask,
                 float scale, int64_t block_q, int64_t block_k, bool record, int version);
  void fetch(const Tensor& t);
  bool has_mirror(const Tensor& t) const {
    return t.defined() && mirrors_.count(t.storage()->id) > 0;
  }
  // NaN / -inf / +inf of t's logical elements, counted on the device from its mirror.
  NonFinite count_on_device(const Tensor& t) {
    DevRef ref = device(t);
    DevBuf counts(3 * sizeof(unsigned long long));
    check(cudaMemset(counts.get(), 0, 3 * sizeof(unsigned long long)), "memset");
    auto* c = static_cast<unsigned long long*>(counts.get());
    kernel_call([&] {
      cudak::count_nonfinite(ref.f32(), static_cast<int>(t.dim()), t.shape().data(),
                             t.strides().data(), c);
    });
    unsigned long long host[3] = {0, 0, 0};
    check(cudaMemcpy(host, c, sizeof host, cudaMemcpyDeviceToHost), "copy counts");
    NonFinite nf;
    nf.nan = static_cast<int64_t>(host[0]);
    nf.neginf = static_cast<int64_t>(host[1]);
    nf.posinf = static_cast<int64_t>(host[2]);
    return nf;
  }

 private:
  struct Mirror {
    std::weak_ptr<Storage> host;
    DevPtr dev;
  };

  // Drops mirrors whose host storage has died (frees their device memory).
  void purge() {
    for (auto it = mirrors_.begin(); it != mirrors_.end();)
      it = it->second.host.expired() ? mirrors_.erase(it) : std::next(it);
  }

  // The device copy of t: its mirror when this backend made it, else its storage copied up.
  DevRef device(const Tensor& t) {
    const auto& storage = t.storage();
    if (!storage) throw Error("cuda backend: undefined tensor");
    const int64_t offset_bytes = t.offset() * itemsize(t.dtype());
    auto it = mirrors_.find(storage->id);
    if (it != mirrors_.end() && !it->second.host.expired())
      return {static_cast<const std::byte*>(it->second.dev->get()) + offset_bytes, it->second.dev};
    auto buf = std::make_shared<DevBuf>(storage->nbytes);
    check(cudaMemcpy(buf->get(), storage->bytes.get(), static_cast<size_t>(storage->nbytes),
                     cudaMemcpyHostToDevice),
          "copy to device");
    return {static_cast<const std::byte*>(buf->get()) + offset_bytes, buf};
  }

  // t as a row-major float tensor on the device (a strided copy only when t is not).
  DevRef device_rowmajor(const Tensor& t) {
    DevRef ref = device(t);
    if (t.is_contiguous()) return ref;
    auto buf = std::make_shared<DevBuf>(t.numel() * 4);
    kernel_call([&] {
      cudak::strided_copy(static_cast<float*>(buf->get()), ref.f32(), static_cast<int>(t.dim()),
                          t.shape().data(), t.strides().data());
    });
    return {static_cast<const std::byte*>(buf->get()), buf};
  }

  // A new row-major output: the host tensor the trace keeps and its device mirror.
  std::pair<Tensor, float*> output(const Dims& shape) {
    purge();
    Tensor host = Tensor::empty(shape);
    auto buf = std::make_shared<DevBuf>(host.nbytes());
    mirrors_[host.storage()->id] = Mirror{host.storage(), buf};
    return {host, static_cast<float*>(buf->get())};
  }

  // Copies an output down when the policy says so (the sync also surfaces kernel errors).
  void finish(const Tensor& out) {
    check(cudaDeviceSynchronize(), "kernel execution");
    if (g_copy_back) fetch(out);
  }

  // Runs planned calls (gemm_plan.h): right is cuBLAS's A, left its B.
  void run(const std::vector<cudak::GemmCall>& calls, const float* left, const float* right,
           float* c) {
    const float one = 1.0f, zero = 0.0f;
    for (const cudak::GemmCall& g : calls) {
      if (g.m == 0 || g.n == 0 || g.batch == 0) continue;
      check(cublasSgemmStridedBatched(
                blas_, g.transa ? CUBLAS_OP_T : CUBLAS_OP_N, g.transb ? CUBLAS_OP_T : CUBLAS_OP_N,
                static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k), &one,
                right + g.a_off, static_cast<int>(g.lda), g.stride_a, left + g.b_off,
                static_cast<int>(g.ldb), g.stride_b, &zero, c + g.c_off, static_cast<int>(g.ldc),
                g.stride_c, static_cast<int>(g.batch)),
            "sgemm");
    }
  }

  // left (B,h,M,K) · right (or rightᵀ) into c (B,h,M,N); odd operands made row-major first
  void bmm(const Tensor& l, const Tensor& r, bool trans_right, float* c) {
    DevRef ld = device(l), rd = device(r);
    Dims lst = l.strides(), rst = r.strides();
    std::vector<cudak::GemmCall> calls;
    if (!cudak::plan_bmm(l.shape().data(), lst.data(), r.shape().data(), rst.data(), trans_right,
                         &calls)) {
      if (!cudak::mat_operand(l.size(2), l.size(3), lst[2], lst[3]).ok) {
        ld = device_rowmajor(l);  // copies
        lst = contiguous_strides(l.shape());
      }
      if (!cudak::mat_operand(r.size(2), r.size(3), rst[2], rst[3]).ok) {
        rd = device_rowmajor(r);  // copies
        rst = contiguous_strides(r.shape());
      }
      calls.clear();
      cudak::plan_bmm(l.shape().data(), lst.data(), r.shape().data(), rst.data(), trans_right,
                      &calls);
    }
    run(calls, ld.f32(), rd.f32(), c);
    check(cudaDeviceSynchronize(), "sgemm");  // ld / rd may own temporary device copies
  }

  cublasHandle_t blas_ = nullptr;
  std::unordered_map<int64_t, Mirror> mirrors_;  // by host storage id
};

// [SECTION] CudaBackend: ops

namespace {

void require_f32(const Tensor& t, const char* what) {
  if (!t.defined() || t.dtype() != DType::F32)
    throw Error(std::string("cuda backend: ") + what + " must be a defined float32 tensor");
}

}  // namespace

// x (B,T,in) · Wᵀ (in,out) + b -> (B,T,out); x's leading dims must merge into one row stride
Tensor CudaBackend::linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  require_f32(x, "linear input");
  require_f32(weight, "linear weight");
  const int64_t nd = x.dim();
  if (nd < 1 || weight.dim() != 2 || weight.size(1) != x.size(-1))
    throw Error("cuda linear: input " + format_dims(x.shape()) + " does not match weight " +
                format_dims(weight.shape()));
  const int64_t K = x.size(-1), N = weight.size(0), M = x.numel() / std::max<int64_t>(K, 1);
  Dims out_shape = x.shape();
  out_shape.back() = N;
  auto [out, y] = output(out_shape);  // (..., out)

  // x as (M,K): in place when the leading dims merge into one row stride, else a copy
  cudak::GemmCall call;
  DevRef xd = device(x);
  if (!cudak::plan_linear(nd, x.shape().data(), x.strides().data(), N, &call)) {
    xd = device_rowmajor(x);  // copies
    const Dims cs = contiguous_strides(x.shape());
    cudak::plan_linear(nd, x.shape().data(), cs.data(), N, &call);
  }
  DevRef wd = device_rowmajor(weight);  // (N,K)
  run({call}, xd.f32(), wd.f32(), y);
  DevRef bd;  // held until finish(): it may own a temporary device copy
  if (bias.defined()) {
    require_f32(bias, "linear bias");
    bd = device_rowmajor(bias);
    kernel_call([&] { cudak::add_bias(y, bd.f32(), M, N); });
  }
  finish(out);
  return out;
}

// q (B,h,Tq,dk) · k (B,h,Tk,dk)ᵀ -> scores (B,h,Tq,Tk): one strided-batched call per b, batched
// over heads; q_heads / k_heads are read in place through their leading dimension
Tensor CudaBackend::qk(const Tensor& q, const Tensor& k) {
  require_f32(q, "q");
  require_f32(k, "k");
  if (q.dim() != 4 || k.dim() != 4 || q.size(0) != k.size(0) || q.size(1) != k.size(1) ||
      q.size(3) != k.size(3))
    throw Error("cuda qk: q " + format_dims(q.shape()) + " and k " + format_dims(k.shape()) +
                " do not match");
  const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), Tk = k.size(2);
  auto [out, c] = output({B, H, Tq, Tk});  // (B,h,Tq,Tk)
  bmm(q, k, true, c);
  finish(out);
  return out;
}

// alpha (B,h,Tq,Tk) · v (B,h,Tk,dk) -> ctx (B,h,Tq,dk), batched over heads as in qk
Tensor CudaBackend::av(const Tensor& alpha, const Tensor& v) {
  require_f32(alpha, "alpha");
  require_f32(v, "v");
  if (alpha.dim() != 4 || v.dim() != 4 || alpha.size(0) != v.size(0) ||
      alpha.size(1) != v.size(1) || alpha.size(3) != v.size(2))
    throw Error("cuda av: alpha " + format_dims(alpha.shape()) + " and v " +
                format_dims(v.shape()) + " do not match");
  const int64_t B = alpha.size(0), H = alpha.size(1), Tq = alpha.size(2), dk = v.size(3);
  auto [out, c] = output({B, H, Tq, dk});  // (B,h,Tq,dk)
  bmm(alpha, v, false, c);
  finish(out);
  return out;
}

namespace {

// A bool mask as the kernels read it: expanded to `shape` (4-D), broadcast dims stride 0.
cudak::MaskView mask_view(const Tensor& mask, const Dims& shape, const DevRef& ref) {
  cudak::MaskView mv;
  mv.data = ref.b8();
  for (int d = 0; d < 4; ++d) mv.s[d] = shape[d] == 1 ? 0 : mask.strides()[d];
  return mv;
}

Tensor expanded_mask(const Tensor& mask, const Dims& shape) {
  if (mask.dtype() != DType::Bool) throw Error("cuda backend: the mask must be bool");
  Tensor m = mask;
  while (m.dim() < 4) m = m.view([&] {
    Dims s = m.shape();
    s.insert(s.begin(), 1);
    return s;
  }());
  return m.expand(shape);  // view
}

}  // namespace

SoftmaxSteps CudaBackend::scale_mask_softmax(const Tensor& scores, const SoftmaxSpec& spec) {
  require_f32(scores, "scores");
  if (scores.dim() != 4)
    throw Error("cuda scale_mask_softmax: scores must be (B,h,Tq,Tk), got " +
                format_dims(scores.shape()));
  const Dims shape = scores.shape();
  if (spec.axis != -1 && spec.axis != -2 && spec.axis != 3 && spec.axis != 2)
    throw Error("cuda scale_mask_softmax: axis must be -1 or -2");
  DevRef sd = device_rowmajor(scores);
  const bool has_mask = spec.mask.defined();  // as the CPU: mask2 only goes with a mask
  SoftmaxSteps steps;
  float* scaled = nullptr;
  float* masked = nullptr;
  float* alpha = nullptr;
  std::tie(steps.scaled, scaled) = output(shape);  // scores_scaled (B,h,Tq,Tk)
  if (has_mask) std::tie(steps.masked, masked) = output(shape);  // scores_masked
  std::tie(steps.alpha, alpha) = output(shape);    // alpha (B,h,Tq,Tk)

  cudak::SoftmaxArgs a;
  a.scores = sd.f32();
  a.scaled = scaled;
  a.masked = masked;
  a.alpha = alpha;
  a.B = shape[0];
  a.H = shape[1];
  a.Tq = shape[2];
  a.Tk = shape[3];
  a.scale = spec.scale;
  a.fill = spec.fill;
  a.additive = spec.additive;
  a.axis = spec.axis == -2 || spec.axis == 2 ? -2 : -1;
  a.fp16_no_max = spec.fp16_no_max;
  DevRef m1, m2;
  if (spec.mask.defined()) {
    const Tensor m = expanded_mask(spec.mask, shape);
    m1 = device(m);
    a.mask = mask_view(m, shape, m1);
  }
  if (spec.mask2.defined()) {
    const Tensor m = expanded_mask(spec.mask2, shape);
    m2 = device(m);
    a.mask2 = mask_view(m, shape, m2);
  }
  g_last_softmax_version = kernel_call([&] { return cudak::softmax_forward(a, g_softmax_version); });
  finish(steps.scaled);
  if (has_mask && g_copy_back) fetch(steps.masked);
  if (g_copy_back) fetch(steps.alpha);
  return steps;
}

// The keep mask comes from the CPU backend so both backends drop the same cells.
Tensor CudaBackend::dropout(const Tensor& alpha, float p, uint64_t seed) {
  if (!g_copy_back) fetch(alpha);
  return cpu_backend().dropout(alpha, p, seed);
}

// the copy: a row-major copy made by the strided-copy kernel (x itself when already row-major)
Tensor CudaBackend::contiguous(const Tensor& x) {
  if (x.is_contiguous()) return x;                 // no copy, as Tensor::contiguous
  if (x.dtype() != DType::F32) return x.contiguous();  // bool: on the host
  DevRef xd = device(x);
  auto [out, y] = output(x.shape());  // same shape, row-major       // copies
  kernel_call([&] {
    cudak::strided_copy(y, xd.f32(), static_cast<int>(x.dim()), x.shape().data(),
                        x.strides().data());
  });
  finish(out);
  return out;
}

void CudaBackend::fetch(const Tensor& t) {
  if (!t.defined()) return;
  auto it = mirrors_.find(t.storage()->id);
  if (it == mirrors_.end()) return;
  check(cudaMemcpy(t.storage()->bytes.get(), it->second.dev->get(),
                   static_cast<size_t>(t.storage()->nbytes), cudaMemcpyDeviceToHost),
        "copy to host");
}

// [SECTION] flash, timing, public functions

CudaBackend::FlashRun CudaBackend::flash(const Tensor& q, const Tensor& k, const Tensor& v,
                                         const FlashMask& mask, float scale, int64_t block_q,
                                         int64_t block_k, bool record, int version) {
  require_f32(q, "q");
  require_f32(k, "k");
  require_f32(v, "v");
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || k.shape() != v.shape() ||
      q.size(0) != k.size(0) || q.size(1) != k.size(1) || q.size(3) != k.size(3))
    throw Error("cuda flash: q " + format_dims(q.shape()) + ", k " + format_dims(k.shape()) +
                ", v " + format_dims(v.shape()) + " do not match (B,h,T,dk)");
  const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), Tk = k.size(2), dk = q.size(3);
  if (block_q == 0) block_q = 64;
  if (block_k == 0) block_k = 64;
  if (block_q < 1 || block_k < 1)
    throw Error("cuda flash: block sizes must be positive (got " + std::to_string(block_q) +
                "x" + std::to_string(block_k) + ")");
  const int64_t nkb = (Tk + block_k - 1) / block_k;
  FlashRun r;
  float* out = nullptr;
  float* tmax = nullptr;
  float* tsum = nullptr;
  float* rmax = nullptr;
  float* rsum = nullptr;
  std::tie(r.out, out) = output({B, H, Tq, dk});  // (B,h,Tq,dk)
  std::tie(r.m, rmax) = output({B, H, Tq});       // (B,h,Tq)
  std::tie(r.l, rsum) = output({B, H, Tq});       // (B,h,Tq)
  float* tscores = nullptr;
  float* tprobs = nullptr;
  float* tacc = nullptr;
  if (record) {
    std::tie(r.tile_max, tmax) = output({B, H, Tq, nkb});     // (B,h,Tq,nkb)
    std::tie(r.tile_sum, tsum) = output({B, H, Tq, nkb});     // (B,h,Tq,nkb)
    std::tie(r.scores, tscores) = output({B, H, Tq, Tk});     // (B,h,Tq,Tk)
    std::tie(r.probs, tprobs) = output({B, H, Tq, Tk});       // (B,h,Tq,Tk)
    std::tie(r.acc, tacc) = output({B, H, Tq, nkb, dk});      // (B,h,Tq,nkb,dk)
  }
  DevRef qd = device(q), kd = device(k), vd = device(v), md, kl, ql;
  cudak::FlashArgs a;
  a.q = qd.f32();
  a.k = kd.f32();
  a.v = vd.f32();
  for (int d = 0; d < 4; ++d) {
    a.qs[d] = q.strides()[d];
    a.ks[d] = k.strides()[d];
    a.vs[d] = v.strides()[d];
  }
  const Dims shape{B, H, Tq, Tk};
  if (mask.dense.defined()) {
    const Tensor m = expanded_mask(mask.dense, shape);
    md = device(m);
    a.mask = mask_view(m, shape, md);
  }
  auto lengths = [&](const std::vector<int64_t>& len, DevRef& ref, const char* what) {
    if (len.empty()) return static_cast<const int64_t*>(nullptr);
    if (static_cast<int64_t>(len.size()) != B)
      throw Error(std::string("cuda flash: ") + what + " has " + std::to_string(len.size()) +
                  " lengths for batch " + std::to_string(B));
    Tensor host = Tensor::empty({static_cast<int64_t>(len.size()) * 2});  // 8 bytes each
    std::memcpy(host.f32(), len.data(), len.size() * sizeof(int64_t));
    ref = device(host);
    return reinterpret_cast<const int64_t*>(ref.base);
  };
  a.mask.causal = mask.causal;
  a.mask.key_len = lengths(mask.key_lengths, kl, "key padding");
  a.mask.query_len = lengths(mask.query_lengths, ql, "query padding");
  a.mask.left = mask.side == PadSide::Left;
  a.mask.tq = Tq;
  a.mask.tk = Tk;
  a.out = out;
  a.tile_max = tmax;
  a.tile_sum = tsum;
  a.tile_scores = tscores;
  a.tile_probs = tprobs;
  a.tile_acc = tacc;
  a.row_max = rmax;
  a.row_sum = rsum;
  a.B = B;
  a.H = H;
  a.Tq = Tq;
  a.Tk = Tk;
  a.dk = dk;
  a.scale = scale;
  a.block_q = static_cast<int>(block_q);
  a.block_k = static_cast<int>(block_k);
  r.version = kernel_call([&] { return cudak::flash_forward(a, version); });
  finish(r.out);
  if (g_copy_back) {
    fetch(r.m);
    fetch(r.l);
    if (record)
      for (const Tensor* t : {&r.tile_max, &r.tile_sum, &r.scores, &r.probs, &r.acc}) fetch(*t);
  }
  return r;
}

namespace {
std::mutex g_backend_mutex;
std::unique_ptr<CudaBackend> g_backend;
}  // namespace

bool cuda_device_present(std::string* why_not) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    if (why_not != nullptr)
      *why_not = err != cudaSuccess
                     ? std::string("no usable CUDA device (") + cudaGetErrorString(err) + ")"
                     : std::string("no CUDA device found");
    return false;
  }
  return true;
}

static CudaBackend& the_backend() {
  std::lock_guard<std::mutex> lock(g_backend_mutex);
  if (!g_backend) {
    std::string why;
    if (!cuda_device_present(&why)) throw Error("backend 'cuda' is not available: " + why);
    g_backend = std::make_unique<CudaBackend>();
  }
  return *g_backend;
}

Backend& cuda_backend() { return the_backend(); }

void cuda_set_copy_back(bool on) { g_copy_back = on; }
bool cuda_copy_back() { return g_copy_back; }
void cuda_fetch(const Tensor& t) { the_backend().fetch(t); }

void cuda_set_softmax_version(int version) { g_softmax_version = version; }
int cuda_last_softmax_version() { return g_last_softmax_version; }

namespace {
int g_last_flash_version = 0;

// (rows) slice of a (B,h,Tq,nkb) record at column kb, or of a (B,h,Tq) row figure.
Tensor rows_of(const Tensor& t, int64_t b, int64_t h, int64_t q0, int64_t rows, int64_t kb) {
  Tensor s = t.narrow(0, b, 1).narrow(1, h, 1).narrow(2, q0, rows);  // view
  if (kb >= 0) s = s.narrow(3, kb, 1);                                  // view
  return s.reshape({rows});                                              // copies
}
}  // namespace

FlashCoreResult cuda_flash_attention_core(const Tensor& q, const Tensor& k, const Tensor& v,
                                          const FlashMask& mask, float scale,
                                          const FlashOptions& options, int version) {
  const bool record = options.record_tiles;
  const int64_t bq = options.block_q > 0 ? options.block_q : 64;
  const int64_t bk = options.block_k > 0 ? options.block_k : 64;
  const bool copy_back = g_copy_back;
  if (record) g_copy_back = true;  // events are read on the host
  CudaBackend::FlashRun run;
  try {
    run = the_backend().flash(q, k, v, mask, scale, bq, bk, record, version);
  } catch (...) {
    g_copy_back = copy_back;
    throw;
  }
  g_copy_back = copy_back;
  g_last_flash_version = run.version;

  FlashCoreResult res;
  res.out = run.out;
  res.m = run.m;
  res.l = run.l;
  FlashShape& sh = res.stats.shape;
  sh.batch = q.size(0);
  sh.heads = q.size(1);
  sh.tq = q.size(2);
  sh.tk = k.size(2);
  sh.head_dim = q.size(3);
  sh.block_q = bq;
  sh.block_k = bk;
  res.stats.tiles_total = sh.batch * sh.heads * sh.q_blocks() * sh.k_blocks();
  res.stats.threads = 1;
  if (!record) return res;

  // Events in the order of a sequential run (flash.h): for b, h, query block: tiles, final.
  for (int64_t b = 0; b < sh.batch; ++b) {
    if (options.trace_batch >= 0 && b != options.trace_batch) continue;
    for (int64_t h = 0; h < sh.heads; ++h) {
      if (options.trace_head >= 0 && h != options.trace_head) continue;
      for (int64_t qb = 0; qb < sh.q_blocks(); ++qb) {
        const int64_t q0 = qb * bq, rows = std::min(bq, sh.tq - q0);
        const int64_t last_row = q0 + rows - 1;
        Tensor m_before = Tensor::empty({rows}), l_before = Tensor::zeros({rows});
        for (int64_t r = 0; r < rows; ++r) m_before.f32()[r] = -INFINITY;
        for (int64_t kb = 0; kb < sh.k_blocks(); ++kb) {
          FlashEvent ev;
          ev.b = b;
          ev.h = h;
          ev.q_block = qb;
          ev.k_block = kb;
          ev.q0 = q0;
          ev.rows = rows;
          ev.k0 = kb * bk;
          ev.cols = std::min(bk, sh.tk - ev.k0);
          const bool skipped = mask.causal && ev.k0 > last_row;  // as the kernel skips
          ev.kind = skipped ? FlashEventKind::Skipped : FlashEventKind::Tile;
          ev.m_before = m_before;
          ev.l_before = l_before;
          ev.m_after = rows_of(run.tile_max, b, h, q0, rows, kb);
          ev.l_after = rows_of(run.tile_sum, b, h, q0, rows, kb);
          ev.rescale = Tensor::empty({rows});
          for (int64_t r = 0; r < rows; ++r) {
            const float mb = ev.m_before.f32()[r], ma = ev.m_after.f32()[r];
            ev.rescale.f32()[r] = ma == -INFINITY ? 1.0f : std::exp(mb - ma);
          }
          if (!skipped) {  // (rows, cols) and (rows, dk) slices of the kernel's records
            auto cells = [&](const Tensor& t) {
              return t.narrow(0, b, 1).narrow(1, h, 1).narrow(2, q0, rows).narrow(3, ev.k0, ev.cols)
                  .reshape({rows, ev.cols});  // copies
            };
            ev.scores = cells(run.scores);
            ev.probs = cells(run.probs);
            ev.acc = run.acc.narrow(0, b, 1).narrow(1, h, 1).narrow(2, q0, rows).narrow(3, kb, 1)
                         .reshape({rows, sh.head_dim});  // copies
          }
          m_before = ev.m_after;
          l_before = ev.l_after;
          res.events.push_back(std::move(ev));
        }
        FlashEvent fin;
        fin.kind = FlashEventKind::Final;
        fin.b = b;
        fin.h = h;
        fin.q_block = qb;
        fin.k_block = -1;
        fin.q0 = q0;
        fin.rows = rows;
        fin.m = rows_of(run.m, b, h, q0, rows, -1);
        fin.l = rows_of(run.l, b, h, q0, rows, -1);
        fin.out = run.out.narrow(0, b, 1).narrow(1, h, 1).narrow(2, q0, rows).reshape(
            {rows, sh.head_dim});  // copies
        res.events.push_back(std::move(fin));
      }
    }
  }
  return res;
}

int cuda_last_flash_version() { return g_last_flash_version; }

FlashCoreResult CudaBackend::flash_core(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMask& mask,
                                        float scale, const FlashOptions& options) {
  FlashCoreResult r = cuda_flash_attention_core(q, k, v, mask, scale, options);
  flash_closed_form_figures(r, mask);
  return r;
}

ForwardResult cuda_forward(const MhaConfig& config, const MhaWeights& weights,
                           const MhaInputs& inputs, const std::vector<std::string>& keep) {
  CudaBackend& be = the_backend();
  const bool copy_back = g_copy_back;
  g_copy_back = false;
  ForwardResult r;
  try {
    r = forward(config, weights, inputs, be);
  } catch (...) {
    g_copy_back = copy_back;
    throw;
  }
  g_copy_back = copy_back;
  // copy down the storages of the kept steps (a kept view brings its parent's storage)
  std::vector<int64_t> fetched;
  for (const Step& s : r.trace.steps) {
    if (s.skipped() || !be.has_mirror(s.out)) continue;
    if (std::find(keep.begin(), keep.end(), s.name) == keep.end()) continue;
    if (std::find(fetched.begin(), fetched.end(), s.out.storage()->id) != fetched.end()) continue;
    be.fetch(s.out);
    fetched.push_back(s.out.storage()->id);
  }
  // the counts the trace took from unfilled host memory, taken again where the data is
  for (Step& s : r.trace.steps) {
    if (s.skipped() || !be.has_mirror(s.out) || s.out.dtype() != DType::F32) continue;
    const bool on_host =
        std::find(fetched.begin(), fetched.end(), s.out.storage()->id) != fetched.end();
    const NonFinite nf = on_host ? count_nonfinite(s.out) : be.count_on_device(s.out);
    s.nan_count = nf.nan;
    s.neginf_count = nf.neginf;
    s.posinf_count = nf.posinf;
    if (!on_host)
      s.note += std::string(s.note.empty() ? "" : "; ") +
                "on the device only: its host tensor was not filled";
  }
  return r;
}

void cuda_synchronize() { check(cudaDeviceSynchronize(), "synchronize"); }

double cuda_time_ms(void (*fn)(void*), void* ctx, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) fn(ctx);
  cuda_synchronize();
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    check(cudaEventRecord(start), "event record");
    fn(ctx);
    check(cudaEventRecord(stop), "event record");
    check(cudaEventSynchronize(stop), "event sync");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start, stop), "event time");
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times.empty() ? 0.0 : times[times.size() / 2];
}

}  // namespace attnsim

// The module's one entry point (backend_registry.cpp finds it with dlsym): the backend, or
// nullptr with why_not said when the runtime sees no device.
extern "C" attnsim::Backend* attnsim_cuda_backend(std::string* why_not) {
  if (!attnsim::cuda_device_present(why_not)) return nullptr;
  return &attnsim::cuda_backend();
}
