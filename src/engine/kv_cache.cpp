#include "kv_cache.h"

#include <algorithm>
#include <cstring>

#include "error.h"
#include "gemm.h"

namespace attnsim {

// [SECTION] policies

int64_t CachePolicy::slots(int64_t t_max) const {
  switch (kind) {
    case PolicyKind::Full: return t_max;
    case PolicyKind::Window: return window;
    case PolicyKind::SinkWindow: return sink + window;
  }
  return t_max;
}

int64_t CachePolicy::slot_of(int64_t p, int64_t t_max) const {
  switch (kind) {
    case PolicyKind::Full: return p;
    case PolicyKind::Window: return p % window;                         // the oldest slot rolls over
    case PolicyKind::SinkWindow: return p < sink ? p : sink + (p - sink) % window;  // sinks never move
  }
  return p < t_max ? p : -1;
}

std::string CachePolicy::text() const {
  switch (kind) {
    case PolicyKind::Full: return "full";
    case PolicyKind::Window: return "window=" + std::to_string(window);
    case PolicyKind::SinkWindow: return "sink=" + std::to_string(sink) + ",window=" + std::to_string(window);
  }
  return "?";
}

static int64_t parse_count(const std::string& text, const std::string& spec) {
  size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used != text.size() || text.empty() || v < 0)
    throw Error("bad number '" + text + "' in cache policy '" + spec + "'");
  return v;
}

CachePolicy parse_cache_policy(const std::string& spec) {
  const std::string valid = " (valid: full, window=W, sink=S,window=W)";
  CachePolicy p;
  if (spec == "full") return p;
  if (spec.rfind("window=", 0) == 0) {
    p.kind = PolicyKind::Window;
    p.window = parse_count(spec.substr(7), spec);
  } else if (spec.rfind("sink=", 0) == 0) {
    const size_t comma = spec.find(",window=");
    if (comma == std::string::npos) throw Error("cache policy '" + spec + "' has a sink but no window" + valid);
    p.kind = PolicyKind::SinkWindow;
    p.sink = parse_count(spec.substr(5, comma - 5), spec);
    p.window = parse_count(spec.substr(comma + 8), spec);
  } else {
    throw Error("unknown cache policy '" + spec + "'" + valid);
  }
  if (p.window == 0) throw Error("cache policy '" + spec + "': the window must hold at least one position");
  return p;
}

void check_policy(const CachePolicy& p, int64_t t_max) {
  if (p.kind == PolicyKind::Full) return;
  if (p.window > t_max)
    throw Error("window " + std::to_string(p.window) + " is larger than T_max " + std::to_string(t_max) +
                ": the cache could never fill it");
  if (p.kind == PolicyKind::SinkWindow && p.sink + p.window > t_max)
    throw Error("sink " + std::to_string(p.sink) + " + window " + std::to_string(p.window) +
                " is larger than T_max " + std::to_string(t_max));
}

std::vector<int64_t> kept_positions(const CachePolicy& p, int64_t t) {
  std::vector<int64_t> kept;
  for (int64_t pos = 0; pos < t; ++pos) {
    const bool recent = pos >= t - p.window;
    const bool keep = p.kind == PolicyKind::Full ? true
                      : p.kind == PolicyKind::Window ? recent
                                                     : pos < p.sink || recent;
    if (keep) kept.push_back(pos);
  }
  return kept;
}

// [SECTION] contiguous cache

KvCache::KvCache(int64_t B, int64_t g, int64_t dk, int64_t t_max, CachePolicy policy)
    : t_max_(t_max), policy_(policy) {
  if (B <= 0 || g <= 0 || dk <= 0 || t_max <= 0)
    throw Error("a KV cache needs positive sizes, got B=" + std::to_string(B) + " g=" + std::to_string(g) +
                " dk=" + std::to_string(dk) + " T_max=" + std::to_string(t_max));
  check_policy(policy, t_max);
  const int64_t slots = policy.slots(t_max);
  k_ = Tensor::zeros({B, g, slots, dk});  // (B,g,slots,dk) one storage, allocated once
  v_ = Tensor::zeros({B, g, slots, dk});
  k_slot_counts_.resize(slots);
  v_slot_counts_.resize(slots);
}

int64_t KvCache::storage_bytes() const { return k_.storage()->nbytes + v_.storage()->nbytes; }

// Copies row i of src (B,g,n,dk) into slot `slot` of dst (B,g,slots,dk); returns its counts.
static NonFinite copy_row(const Tensor& src, int64_t i, Tensor& dst, int64_t slot) {
  const int64_t B = src.size(0), g = src.size(1), dk = src.size(3);
  const Dims& ss = src.strides();
  const Dims& ds = dst.strides();
  NonFinite c;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < g; ++j) {
      const float* from = src.f32() + b * ss[0] + j * ss[1] + i * ss[2];
      float* to = dst.f32() + b * ds[0] + j * ds[1] + slot * ds[2];
      if (ss[3] == 1) {
        std::memcpy(to, from, dk * sizeof(float));
      } else {
        for (int64_t e = 0; e < dk; ++e) to[e] = from[e * ss[3]];
      }
      count_nonfinite_into(to, dk, c);
    }
  return c;
}

KvCache::Written KvCache::append(const Tensor& k, const Tensor& v) {
  const Dims want{k_.size(0), k_.size(1), k.dim() == 4 ? k.size(2) : -1, k_.size(3)};
  if (k.shape() != want || v.shape() != want)
    throw Error("cache append needs k and v of shape (B,g,n,dk) = " + format_dims(want) + ", got " +
                format_dims(k.shape()) + " and " + format_dims(v.shape()));
  const int64_t n = want[2];
  if (length_ + n > t_max_)
    throw Error("the sequence would reach " + std::to_string(length_ + n) + " tokens, past T_max " +
                std::to_string(t_max_) + " of this cache");
  if (n > 1 && length_ + n > slots())
    throw Error("a prefill of " + std::to_string(n) + " rows after " + std::to_string(length_) +
                " tokens does not fit the " + std::to_string(slots()) + " slots of policy " + policy_.text() +
                " without evicting rows it still needs; feed the rest one token at a time");
  const int64_t first = policy_.slot_of(length_, t_max_);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pos = length_ + i, slot = policy_.slot_of(pos, t_max_);
    k_slot_counts_[slot] = copy_row(k, i, k_, slot);
    v_slot_counts_[slot] = copy_row(v, i, v_, slot);
    if (slot == filled()) slot_pos_.push_back(pos);
    else slot_pos_[slot] = pos;  // evicts the position that held it
  }
  length_ += n;
  return {k_.narrow(2, first, n), v_.narrow(2, first, n), first};  // views of the written slots
}

Tensor KvCache::k() const { return k_.narrow(2, 0, filled()); }  // (B,g,filled,dk) view
Tensor KvCache::v() const { return v_.narrow(2, 0, filled()); }

static NonFinite sum_counts(const std::vector<NonFinite>& per_slot, int64_t n) {
  NonFinite c;
  for (int64_t s = 0; s < n; ++s) c.nan += per_slot[s].nan, c.neginf += per_slot[s].neginf, c.posinf += per_slot[s].posinf;
  return c;
}
NonFinite KvCache::k_counts() const { return sum_counts(k_slot_counts_, filled()); }
NonFinite KvCache::v_counts() const { return sum_counts(v_slot_counts_, filled()); }

// [SECTION] paged cache

BlockPool::BlockPool(int64_t blocks, int64_t block_size) : blocks_(blocks), block_size_(block_size) {
  if (block_size <= 0) throw Error("the block size must be positive, got " + std::to_string(block_size));
  if (blocks <= 0) throw Error("the block pool needs at least one block, got " + std::to_string(blocks));
  for (int64_t b = 0; b < blocks; ++b) free_.push_back(b);
}

int64_t BlockPool::allocate() {
  if (free_.empty())
    throw Error("all " + std::to_string(blocks_) + " blocks of " + std::to_string(block_size_) +
                " positions are in use: the pool is full");
  const int64_t b = free_.front();
  free_.erase(free_.begin());
  return b;
}

void BlockPool::release(int64_t block) {
  const auto it = std::lower_bound(free_.begin(), free_.end(), block);
  if (block < 0 || block >= blocks_ || (it != free_.end() && *it == block))
    throw Error("block " + std::to_string(block) + " is not in use");
  free_.insert(it, block);
}

void reserve_blocks(BlockPool& pool, BlockTable& table, int64_t new_length) {
  const int64_t need = (new_length + pool.block_size() - 1) / pool.block_size();
  while (static_cast<int64_t>(table.blocks.size()) < need) table.blocks.push_back(pool.allocate());
}

void release_blocks(BlockPool& pool, BlockTable& table) {
  for (int64_t b : table.blocks) pool.release(b);
  table.blocks.clear();
  table.length = 0;
}

PagedKv::PagedKv(int64_t blocks, int64_t g, int64_t block_size, int64_t dk) {
  if (blocks <= 0 || g <= 0 || block_size <= 0 || dk <= 0)
    throw Error("a paged cache needs positive sizes (blocks, kv heads, block size, head dim)");
  k_ = Tensor::zeros({blocks, g, block_size, dk});  // (blocks,g,block,dk) one storage
  v_ = Tensor::zeros({blocks, g, block_size, dk});
}

int64_t PagedKv::storage_bytes() const { return k_.storage()->nbytes + v_.storage()->nbytes; }

void PagedKv::write(const BlockTable& table, int64_t first, const Tensor& k, const Tensor& v) {
  const int64_t bs = k_.size(2), n = k.size(2);
  if (k.dim() != 4 || k.size(0) != 1 || k.size(1) != k_.size(1) || k.size(3) != k_.size(3) || v.shape() != k.shape())
    throw Error("paged write needs k and v of shape (1,g,n,dk), got " + format_dims(k.shape()));
  if ((first + n + bs - 1) / bs > static_cast<int64_t>(table.blocks.size()))
    throw Error("paged write past the blocks reserved for the sequence");
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pos = first + i, block = table.blocks[pos / bs];
    // the block's slot as a (1,g,1,dk)-addressable row: block index folded into the batch axis
    Tensor kd = k_.narrow(0, block, 1), vd = v_.narrow(0, block, 1);
    copy_row(k, i, kd, pos % bs);
    copy_row(v, i, vd, pos % bs);
  }
}

static Tensor gather(const Tensor& pool, const BlockTable& table, int64_t t) {
  const int64_t g = pool.size(1), bs = pool.size(2), dk = pool.size(3);
  Tensor out = Tensor::empty({1, g, t, dk});  // (1,g,t,dk) new storage
  for (int64_t pos = 0; pos < t; ++pos)
    for (int64_t j = 0; j < g; ++j)
      std::memcpy(out.f32() + (j * t + pos) * dk,
                  pool.f32() + table.blocks[pos / bs] * pool.strides()[0] + j * pool.strides()[1] +
                      (pos % bs) * pool.strides()[2],
                  dk * sizeof(float));
  return out;
}
Tensor PagedKv::gather_k(const BlockTable& table, int64_t t) const { return gather(k_, table, t); }
Tensor PagedKv::gather_v(const BlockTable& table, int64_t t) const { return gather(v_, table, t); }

// Calls fn(logical block, physical block, first position, rows) for the t positions.
template <class Fn>
static void for_each_block(const BlockTable& table, int64_t bs, int64_t t, Fn&& fn) {
  for (int64_t lb = 0; lb * bs < t; ++lb) fn(table.blocks[lb], lb * bs, std::min(bs, t - lb * bs));
}

Tensor paged_qk(const Tensor& q_in, const Tensor& pool, const BlockTable& table, int64_t t) {
  const Tensor q = q_in.strides().back() == 1 ? q_in : q_in.contiguous();
  const int64_t h = q.size(1), n = q.size(2), dk = q.size(3), g = pool.size(1), bs = pool.size(2), r = h / g;
  const Dims& qs = q.strides();
  const Dims& ps = pool.strides();
  Tensor s = Tensor::empty({1, h, n, t});  // (1,h,n,t)
  for_each_block(table, bs, t, [&](int64_t block, int64_t p0, int64_t rows) {
    for (int64_t j = 0; j < g; ++j) {
      const float* kb = pool.f32() + block * ps[0] + j * ps[1];  // (rows,dk), ld = ps[2]
      if (n == 1) {  // the group's r query heads as r rows of one matrix
        sgemm(Op::N, Op::T, r, rows, dk, 1.0f, q.f32() + j * r * qs[1], qs[1], kb,
                    ps[2], 0.0f, s.f32() + j * r * t + p0, t);
        continue;
      }
      for (int64_t hh = j * r; hh < (j + 1) * r; ++hh)
        sgemm(Op::N, Op::T, n, rows, dk, 1.0f, q.f32() + hh * qs[1], qs[2], kb,
                    ps[2], 0.0f, s.f32() + hh * n * t + p0, t);
    }
  });
  return s;
}

Tensor paged_av(const Tensor& alpha_in, const Tensor& pool, const BlockTable& table, int64_t t) {
  const Tensor alpha = alpha_in.contiguous();  // (1,h,n,t)
  const int64_t h = alpha.size(1), n = alpha.size(2), g = pool.size(1), bs = pool.size(2), dk = pool.size(3);
  const int64_t r = h / g;
  const Dims& ps = pool.strides();
  Tensor c = Tensor::zeros({1, h, n, dk});  // (1,h,n,dk), accumulated block by block
  for_each_block(table, bs, t, [&](int64_t block, int64_t p0, int64_t rows) {
    for (int64_t j = 0; j < g; ++j) {
      const float* vb = pool.f32() + block * ps[0] + j * ps[1];  // (rows,dk), ld = ps[2]
      if (n == 1) {
        sgemm(Op::N, Op::N, r, dk, rows, 1.0f, alpha.f32() + j * r * t + p0, t,
                    vb, ps[2], 1.0f, c.f32() + j * r * dk, dk);
        continue;
      }
      for (int64_t hh = j * r; hh < (j + 1) * r; ++hh)
        sgemm(Op::N, Op::N, n, dk, rows, 1.0f, alpha.f32() + hh * n * t + p0, t,
                    vb, ps[2], 1.0f, c.f32() + hh * n * dk, dk);
    }
  });
  return c;
}

}  // namespace attnsim
