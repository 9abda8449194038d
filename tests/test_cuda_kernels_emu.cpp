// The CUDA kernels' own source, run on the CPU under tests/cuda/cuda_emu.h (one std::thread
// per CUDA thread, barriers for __syncthreads and shuffles), against the engine's references.
// This checks the kernels' indexing, tiling, ragged edges, masks and NaN rows on every
// machine, GPU or not. It does not stand in for the GPU run: the real device, nvcc's code,
// cuBLAS and the timings are checked by tests/cuda (skipped without a GPU) and
// tools/gpu-check.sh.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "engine/backend.h"
#include "engine/flash.h"
#include "engine/mask.h"
#include "engine/reference.h"
#include "helpers.h"

// The stand-in CUDA runtime, then the kernels' source itself.
#include "cuda/cuda_emu.h"
#include "engine/cuda/flash_kernels.cuh"
#include "engine/cuda/softmax_kernels.cuh"

using namespace attnsim;

namespace {

Tensor randn(const Dims& shape, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(numel_of(shape)));
  for (float& x : v) x = normal(rng);
  return Tensor::from_values(shape, v);
}

cudak::MaskView dense_view(const Tensor& expanded) {
  cudak::MaskView m;
  m.data = expanded.b8();
  for (int d = 0; d < 4; ++d) m.s[d] = expanded.strides()[d];
  return m;
}

struct SoftmaxRun {
  Tensor scaled, masked, alpha;
};

// What softmax_forward() launches, on the emulator.
SoftmaxRun run_softmax(int version, const Tensor& scores, const SoftmaxSpec& spec) {
  const Dims& sh = scores.shape();
  SoftmaxRun r{Tensor::empty(sh), spec.mask.defined() ? Tensor::empty(sh) : Tensor(),
               Tensor::empty(sh)};
  cudak::SoftmaxArgs a;
  a.scores = scores.f32();
  a.scaled = r.scaled.f32();
  a.masked = spec.mask.defined() ? r.masked.f32() : nullptr;
  a.alpha = r.alpha.f32();
  a.B = sh[0];
  a.H = sh[1];
  a.Tq = sh[2];
  a.Tk = sh[3];
  a.scale = spec.scale;
  if (spec.mask.defined()) a.mask = dense_view(spec.mask);
  if (spec.mask2.defined()) a.mask2 = dense_view(spec.mask2);
  a.fill = spec.fill;
  a.additive = spec.additive;
  a.axis = spec.axis;
  a.fp16_no_max = spec.fp16_no_max;
  if (version == 1) {
    const int64_t rows = a.B * a.H * (a.axis == -1 ? a.Tq : a.Tk);
    attnsim_emu::launch(unsigned((rows + 127) / 128), 1, 128, 0, cudak::softmax_v1_kernel, a);
  } else {
    const int64_t rows = a.B * a.H * a.Tq;
    const int w = cudak::kWarpsPerBlock;
    attnsim_emu::launch(unsigned((rows + w - 1) / w), 1, unsigned(w * 32), 0,
                        cudak::softmax_v2_kernel, a);
  }
  return r;
}

}  // namespace

TEST_CASE("emulated softmax kernels: v1 is the CPU loop to the bit, v2 within float rounding") {
  const int64_t B = 2, H = 3, Tq = 6, Tk = 37;
  const Tensor scores = randn({B, H, Tq, Tk}, 1, 3.0f);
  MaskSpec ms = parse_mask_spec("causal,query-padding=6:4");  // rows 4, 5 of batch 1: NaN
  const Tensor mask = build_mask(ms, B, Tq, Tk).expand({B, H, Tq, Tk});
  struct Variant {
    const char* name;
    SoftmaxSpec spec;
  };
  std::vector<Variant> variants(6);
  variants[0].name = "no mask";
  variants[1].name = "mask (fully hidden rows)";
  variants[1].spec.mask = mask;
  variants[2].name = "additive bug";
  variants[2].spec.mask = mask;
  variants[2].spec.additive = true;
  variants[3].name = "finite fill bug";
  variants[3].spec.mask = mask;
  variants[3].spec.fill = -1e9f;
  variants[4].name = "wrong axis bug";
  variants[4].spec.axis = -2;
  variants[5].name = "fp16 without max bug";
  variants[5].spec.fp16_no_max = true;
  for (auto& v : variants) {
    v.spec.scale = 0.125f * 3;
    INFO(v.name);
    const SoftmaxSteps ref = reference::scale_mask_softmax(scores, v.spec);
    const SoftmaxRun v1 = run_softmax(1, scores, v.spec);
    CHECK(test::max_abs_diff(v1.scaled, ref.scaled) == 0);
    if (v.spec.mask.defined()) CHECK(test::max_abs_diff(v1.masked, ref.masked) == 0);
    CHECK(test::max_abs_diff(v1.alpha, ref.alpha) == 0);
    if (v.spec.axis == -1 && !v.spec.fp16_no_max) {
      const SoftmaxRun v2 = run_softmax(2, scores, v.spec);
      CHECK(test::max_abs_diff(v2.scaled, ref.scaled) == 0);
      if (v.spec.mask.defined()) CHECK(test::max_abs_diff(v2.masked, ref.masked) == 0);
      CHECK(test::max_abs_diff(v2.alpha, ref.alpha) <= 1e-6);
    }
  }
  // the fully hidden rows are NaN, as on the CPU
  SoftmaxSpec spec;
  spec.mask = mask;
  const SoftmaxRun v2 = run_softmax(2, scores, spec);
  CHECK(std::isnan(v2.alpha.at({1, 0, 5, 0})));
  CHECK_FALSE(std::isnan(v2.alpha.at({0, 0, 5, 0})));
}

namespace {

struct FlashCase {
  const char* name;
  int64_t B, H, Tq, Tk, dk;
  const char* mask;
  int64_t bq, bk;
  int version;
  bool dense;  // the mask as a dense bool tensor instead of its structure
};

struct FlashRun {
  Tensor out, m, l, tile_max, tile_sum, scores, probs, acc;
  Tensor out_fast;  // v2 only: the same launch compiled without the tile records
  int64_t nkb;
};

FlashRun run_flash(const FlashCase& c, const Tensor& q, const Tensor& k, const Tensor& v,
                   const FlashMask& fm, const Tensor& dense, float scale,
                   std::vector<int64_t>& klen, std::vector<int64_t>& qlen) {
  FlashRun r;
  r.nkb = (c.Tk + c.bk - 1) / c.bk;
  r.out = Tensor::empty({c.B, c.H, c.Tq, c.dk});
  r.m = Tensor::empty({c.B, c.H, c.Tq});
  r.l = Tensor::empty({c.B, c.H, c.Tq});
  r.tile_max = Tensor::empty({c.B, c.H, c.Tq, r.nkb});
  r.tile_sum = Tensor::empty({c.B, c.H, c.Tq, r.nkb});
  r.scores = Tensor::empty({c.B, c.H, c.Tq, c.Tk});
  r.probs = Tensor::empty({c.B, c.H, c.Tq, c.Tk});
  r.acc = Tensor::empty({c.B, c.H, c.Tq, r.nkb, c.dk});
  cudak::FlashArgs a;
  a.q = q.f32();
  a.k = k.f32();
  a.v = v.f32();
  for (int d = 0; d < 4; ++d) {
    a.qs[d] = q.strides()[d];
    a.ks[d] = k.strides()[d];
    a.vs[d] = v.strides()[d];
  }
  if (c.dense) {
    if (dense.defined()) a.mask = dense_view(dense.expand({c.B, c.H, c.Tq, c.Tk}));
  } else {
    klen = fm.key_lengths;
    qlen = fm.query_lengths;
    a.mask.causal = fm.causal;
    a.mask.key_len = klen.empty() ? nullptr : klen.data();
    a.mask.query_len = qlen.empty() ? nullptr : qlen.data();
    a.mask.left = fm.side == PadSide::Left;
    a.mask.tq = c.Tq;
    a.mask.tk = c.Tk;
  }
  a.out = r.out.f32();
  a.tile_max = r.tile_max.f32();
  a.tile_sum = r.tile_sum.f32();
  a.tile_scores = r.scores.f32();
  a.tile_probs = r.probs.f32();
  a.tile_acc = r.acc.f32();
  a.row_max = r.m.f32();
  a.row_sum = r.l.f32();
  a.B = c.B;
  a.H = c.H;
  a.Tq = c.Tq;
  a.Tk = c.Tk;
  a.dk = c.dk;
  a.scale = scale;
  a.block_q = int(c.bq);
  a.block_k = int(c.bk);
  const unsigned gy = unsigned(c.B * c.H);
  if (c.version == 2) {
    REQUIRE(cudak::flash_v2_fits(a));
    attnsim_emu::launch(unsigned((c.Tq + 63) / 64), gy, cudak::kV2Threads, cudak::kV2Smem,
                        cudak::flash_v2_kernel<true>, a);
    cudak::FlashArgs fast = a;
    r.out_fast = Tensor::empty({c.B, c.H, c.Tq, c.dk});
    fast.out = r.out_fast.f32();
    fast.tile_max = fast.tile_sum = fast.tile_scores = fast.tile_probs = fast.tile_acc = nullptr;
    attnsim_emu::launch(unsigned((c.Tq + 63) / 64), gy, cudak::kV2Threads, cudak::kV2Smem,
                        cudak::flash_v2_kernel<false>, fast);
  } else {
    const size_t smem = sizeof(float) * size_t(2 * c.bk * c.dk + c.bq * c.bk);
    const unsigned gx = unsigned((c.Tq + c.bq - 1) / c.bq);
    if (c.dk <= 16)
      attnsim_emu::launch(gx, gy, unsigned(c.bq), smem, cudak::flash_v1_kernel<16>, a);
    else
      attnsim_emu::launch(gx, gy, unsigned(c.bq), smem, cudak::flash_v1_kernel<64>, a);
  }
  return r;
}

}  // namespace

TEST_CASE("emulated flash kernels v1 and v2: the 2x rule, NaN rows, and the CPU's tile figures") {
  const std::vector<FlashCase> cases = {
      {"v1 odd dk=5, blocks 7x5, causal + query padding", 2, 2, 9, 9, 5,
       "causal,query-padding=9:6", 7, 5, 1, false},
      {"v1 same, dense mask", 2, 2, 9, 9, 5, "causal,query-padding=9:6", 7, 5, 1, true},
      {"v1 cross, left key padding", 2, 1, 6, 13, 16, "key-padding=13:4,side=left", 4, 8, 1,
       false},
      {"v1 dk=64 blocks 16x32, no mask", 1, 2, 33, 47, 64, "", 16, 32, 1, false},
      {"v2 dk=64 ragged, causal", 1, 2, 70, 70, 64, "causal", 64, 64, 2, false},
      {"v2 cross, key + query padding", 2, 1, 65, 130, 64, "key-padding=100:130,query-padding=65:20",
       64, 64, 2, false},
      {"v2 cross, dense mask with NaN rows", 2, 1, 65, 130, 64,
       "causal,key-padding=100:130,query-padding=65:20", 64, 64, 2, true},
  };
  uint32_t seed = 10;
  for (const FlashCase& c : cases) {
    INFO(c.name);
    const int64_t d = c.H * c.dk;
    // q, k, v as the forward pass has them: transposed head views of (B,T,d) projections
    const Tensor q = randn({c.B, c.Tq, d}, seed++).view({c.B, c.Tq, c.H, c.dk}).transpose(1, 2);
    const Tensor k = randn({c.B, c.Tk, d}, seed++).view({c.B, c.Tk, c.H, c.dk}).transpose(1, 2);
    const Tensor v = randn({c.B, c.Tk, d}, seed++).view({c.B, c.Tk, c.H, c.dk}).transpose(1, 2);
    const float scale = 1.0f / std::sqrt(float(c.dk));
    const MaskSpec ms = parse_mask_spec(c.mask);
    const FlashMask fm = FlashMask::from_spec(ms);
    const Tensor dense = build_mask(ms, c.B, c.Tq, c.Tk);  // (B,1,Tq,Tk) or undefined
    std::vector<int64_t> klen, qlen;
    const FlashRun r = run_flash(c, q, k, v, fm, dense, scale, klen, qlen);

    const std::vector<double> ref64 = attention_core_f64(q, k, v, fm, scale);
    const Tensor std32 = attention_core_f32(q, k, v, fm, scale);
    const FlashCompareFigures f = compare_with_reference(r.out, std32, ref64);
    INFO("max|flash-std32| " << f.max_abs_diff << " tolerance " << f.tolerance
                             << " NaN mismatches " << f.nan_mismatches);
    CHECK(f.ok());
    if (c.version == 2) CHECK(test::max_abs_diff(r.out_fast, r.out) == 0);  // records change nothing

    // the CPU's tiled core with the same blocks: same running max and sum after every tile
    FlashOptions fo;
    fo.block_q = c.bq;
    fo.block_k = c.bk;
    fo.record_tiles = true;
    fo.threads = 1;
    const FlashCoreResult cpu = flash_attention_core(q, k, v, fm, scale, fo);
    double worst_m = 0, worst_l = 0, worst_cells = 0;
    int64_t compared = 0;
    for (const FlashEvent& ev : cpu.events) {
      if (ev.kind != FlashEventKind::Tile) continue;
      for (int64_t row = 0; row < ev.rows; ++row) {
        const int64_t i = ev.q0 + row;
        const float m = r.tile_max.at({ev.b, ev.h, i, ev.k_block});
        const float l = r.tile_sum.at({ev.b, ev.h, i, ev.k_block});
        const float cm = ev.m_after.f32()[row], cl = ev.l_after.f32()[row];
        if (std::isinf(cm) || std::isinf(m)) {
          CHECK(m == cm);
        } else {
          worst_m = std::fmax(worst_m, std::fabs(double(m) - cm));
        }
        worst_l = std::fmax(worst_l, std::fabs(double(l) - cl) / std::fmax(1.0, std::fabs(cl)));
        ++compared;
      }
      // the tile's S and P cells and the accumulator after it
      const Tensor s_cells = r.scores.narrow(0, ev.b, 1).narrow(1, ev.h, 1).narrow(2, ev.q0, ev.rows)
                                 .narrow(3, ev.k0, ev.cols).reshape({ev.rows, ev.cols});
      const Tensor p_cells = r.probs.narrow(0, ev.b, 1).narrow(1, ev.h, 1).narrow(2, ev.q0, ev.rows)
                                 .narrow(3, ev.k0, ev.cols).reshape({ev.rows, ev.cols});
      const Tensor acc = r.acc.narrow(0, ev.b, 1).narrow(1, ev.h, 1).narrow(2, ev.q0, ev.rows)
                             .narrow(3, ev.k_block, 1).reshape({ev.rows, c.dk});
      worst_cells = std::fmax(worst_cells, test::max_abs_diff(s_cells, ev.scores));
      worst_cells = std::fmax(worst_cells, test::max_abs_diff(p_cells, ev.probs));
      worst_cells = std::fmax(worst_cells, test::max_abs_diff(acc, ev.acc));
    }
    CHECK(worst_cells <= 1e-4);
    CHECK(compared > 0);
    CHECK(worst_m <= 1e-5);
    CHECK(worst_l <= 1e-5);
    // final figures: the CPU core's m and l
    CHECK(test::max_abs_diff(r.m, cpu.m) <= 1e-5);
    const auto lg = r.l.to_vector(), lc = cpu.l.to_vector();
    double worst = 0;
    for (size_t i = 0; i < lg.size(); ++i)
      worst = std::fmax(worst, std::fabs(double(lg[i]) - lc[i]) / std::fmax(1.0, std::fabs(lc[i])));
    CHECK(worst <= 1e-5);
  }
}

// [SECTION] the cuBLAS plans (gemm_plan.h) through a plain column-major GEMM

#include "engine/cuda/gemm_plan.h"

namespace {

// cublasSgemmStridedBatched's semantics (alpha 1, beta 0), with its argument checks.
void host_sgemm(const cudak::GemmCall& g, const float* A, const float* B, float* C) {
  REQUIRE(g.lda >= std::max<int64_t>(1, g.transa ? g.k : g.m));
  REQUIRE(g.ldb >= std::max<int64_t>(1, g.transb ? g.n : g.k));
  REQUIRE(g.ldc >= std::max<int64_t>(1, g.m));
  for (int64_t p = 0; p < g.batch; ++p)
    for (int64_t j = 0; j < g.n; ++j)
      for (int64_t i = 0; i < g.m; ++i) {
        double s = 0;
        for (int64_t l = 0; l < g.k; ++l) {
          const float* a = A + g.a_off + p * g.stride_a;
          const float* b = B + g.b_off + p * g.stride_b;
          const float av = g.transa ? a[l + i * g.lda] : a[i + l * g.lda];
          const float bv = g.transb ? b[j + l * g.ldb] : b[l + j * g.ldb];
          s += double(av) * bv;
        }
        C[g.c_off + p * g.stride_c + i + j * g.ldc] = float(s);
      }
}

// What CudaBackend::bmm does, with the host GEMM in place of cuBLAS.
Tensor planned_bmm(const Tensor& l_in, const Tensor& r_in, bool trans_right, bool* in_place) {
  Tensor l = l_in, r = r_in;
  std::vector<cudak::GemmCall> calls;
  *in_place = cudak::plan_bmm(l.shape().data(), l.strides().data(), r.shape().data(),
                              r.strides().data(), trans_right, &calls);
  if (!*in_place) {
    if (!cudak::mat_operand(l.size(2), l.size(3), l.strides()[2], l.strides()[3]).ok)
      l = l.clone();
    if (!cudak::mat_operand(r.size(2), r.size(3), r.strides()[2], r.strides()[3]).ok)
      r = r.clone();
    calls.clear();
    REQUIRE(cudak::plan_bmm(l.shape().data(), l.strides().data(), r.shape().data(),
                            r.strides().data(), trans_right, &calls));
  }
  const int64_t N = trans_right ? r.size(2) : r.size(3);
  Tensor c = Tensor::empty({l.size(0), l.size(1), l.size(2), N});
  for (const auto& g : calls) host_sgemm(g, r.f32(), l.f32(), c.f32());
  return c;
}

}  // namespace

TEST_CASE("the cuBLAS plans read transposed head views in place and give q·kᵀ and alpha·v") {
  struct Shape {
    int64_t B, H, Tq, Tk, dk;
  };
  for (const Shape s : {Shape{2, 3, 5, 7, 4}, Shape{1, 1, 1, 3, 1}, Shape{3, 2, 4, 1, 6},
                        Shape{2, 4, 9, 9, 16}}) {
    INFO("B=" << s.B << " h=" << s.H << " Tq=" << s.Tq << " Tk=" << s.Tk << " dk=" << s.dk);
    const int64_t d = s.H * s.dk;
    const Tensor q = randn({s.B, s.Tq, d}, 1).view({s.B, s.Tq, s.H, s.dk}).transpose(1, 2);
    const Tensor k = randn({s.B, s.Tk, d}, 2).view({s.B, s.Tk, s.H, s.dk}).transpose(1, 2);
    const Tensor v = randn({s.B, s.Tk, d}, 3).view({s.B, s.Tk, s.H, s.dk}).transpose(1, 2);
    bool in_place = false;
    CHECK(test::max_abs_diff(planned_bmm(q, k, true, &in_place), reference::qk(q, k)) <= 1e-5);
    CHECK(in_place);  // the transposed views needed no copy
    const Tensor alpha = randn({s.B, s.H, s.Tq, s.Tk}, 4);
    CHECK(test::max_abs_diff(planned_bmm(alpha, v, false, &in_place), reference::av(alpha, v)) <= 1e-5);
    CHECK(in_place);
    // v stored transposed (its rows are columns in memory): still read in place
    const Tensor vt = randn({s.B, s.H, s.dk, s.Tk}, 5).transpose(2, 3);
    CHECK(test::max_abs_diff(planned_bmm(alpha, vt, false, &in_place), reference::av(alpha, vt)) <= 1e-5);
    CHECK(in_place);
    // k broadcast along its rows (stride 0): cannot be read in place, copied first
    if (s.Tk > 1 && s.dk > 1) {
      const Tensor kb = randn({s.B, s.H, 1, s.dk}, 6).expand({s.B, s.H, s.Tk, s.dk});
      CHECK(test::max_abs_diff(planned_bmm(q, kb, true, &in_place), reference::qk(q, kb)) <= 1e-5);
      CHECK_FALSE(in_place);
    }
  }
}

TEST_CASE("the cuBLAS plan for linear merges batch and time, and refuses views it cannot") {
  const Tensor w = randn({6, 8}, 7), none;
  auto planned = [&](const Tensor& x_in, bool* in_place) {
    Tensor x = x_in;
    cudak::GemmCall g;
    *in_place = cudak::plan_linear(x.dim(), x.shape().data(), x.strides().data(), 6, &g);
    if (!*in_place) {
      x = x.clone();
      REQUIRE(cudak::plan_linear(x.dim(), x.shape().data(), x.strides().data(), 6, &g));
    }
    Dims shape = x.shape();
    shape.back() = 6;
    Tensor y = Tensor::empty(shape);
    host_sgemm(g, w.f32(), x.f32(), y.f32());
    return y;
  };
  bool in_place = false;
  const Tensor x = randn({3, 5, 8}, 8);
  CHECK(test::max_abs_diff(planned(x, &in_place), reference::linear(x, w, none)) <= 1e-5);
  CHECK(in_place);
  const Tensor rows = randn({3, 9, 8}, 9).narrow(1, 2, 5);  // rows 2..6 of each batch element
  CHECK(test::max_abs_diff(planned(rows, &in_place), reference::linear(rows, w, none)) <= 1e-5);
  CHECK_FALSE(in_place);  // batch stride 72 != 5 x 8: copied first
  const Tensor one = randn({1, 5, 8}, 10).narrow(1, 1, 3);  // B = 1: a row stride is enough
  CHECK(test::max_abs_diff(planned(one, &in_place), reference::linear(one, w, none)) <= 1e-5);
  CHECK(in_place);
}
