// The KV cache of one attention layer, two ways, and the eviction policies.
//
// Contiguous (KvCache): K and V are each ONE storage (B,g,slots,dk), allocated once; the
// filled part is a narrow view (B,g,t,dk) that grows as tokens are appended. slots = T_max
// for the full policy, W for window=W, S+W for sink=S,window=W (StreamingLLM: the first S
// positions stay, the last W roll through the other slots).
//
// Paged (BlockPool + BlockTable + PagedKv): the way servers store it (vLLM). K and V of a
// layer are a pool of fixed-size blocks, one storage each (blocks,g,block,dk); a sequence
// owns a block table (logical block i -> physical block), blocks come from a free list on
// demand, so a sequence wastes at most block-1 slots instead of T_max - t.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor.h"
#include "trace.h"

namespace attnsim {

// [SECTION] policies

enum class PolicyKind { Full, Window, SinkWindow };

struct CachePolicy {
  PolicyKind kind = PolicyKind::Full;
  int64_t sink = 0;    // S: first positions always kept (SinkWindow)
  int64_t window = 0;  // W: most recent positions kept (Window, SinkWindow)

  int64_t slots(int64_t t_max) const;      // T_max, W or S+W
  int64_t slot_of(int64_t position, int64_t t_max) const;  // where position p is written
  std::string text() const;                // "full", "window=64", "sink=4,window=60"
};

// "full", "window=W", "sink=S,window=W"; throws Error with the valid forms.
CachePolicy parse_cache_policy(const std::string& spec);
// Throws Error when the policy cannot run under t_max (window > T_max, S+W > T_max, W = 0).
void check_policy(const CachePolicy& policy, int64_t t_max);
// The positions a cache under `policy` holds after t tokens, ascending: the promise. Written
// as the definition (no slots), so the tests check the slot arithmetic against it.
std::vector<int64_t> kept_positions(const CachePolicy& policy, int64_t t);

// [SECTION] contiguous cache

class KvCache {
 public:
  KvCache(int64_t batch, int64_t kv_heads, int64_t head_dim, int64_t t_max, CachePolicy policy = {});

  const Tensor& k_storage() const { return k_; }  // (B,g,slots,dk), the whole preallocation
  const Tensor& v_storage() const { return v_; }
  int64_t slots() const { return k_.size(2); }
  int64_t t_max() const { return t_max_; }
  const CachePolicy& policy() const { return policy_; }
  int64_t length() const { return length_; }                  // tokens appended so far (t)
  int64_t filled() const { return static_cast<int64_t>(slot_pos_.size()); }  // min(t, slots)
  const std::vector<int64_t>& slot_positions() const { return slot_pos_; }   // per filled slot
  int64_t storage_bytes() const;  // K and V together: 2·B·g·slots·dk·4

  // Writes k, v (B,g,n,dk) as positions t..t+n-1 and returns the written slots as views
  // into the storage, (B,g,n,dk). Several rows at once (a prefill) must land in free slots
  // without evicting; Error otherwise, and when the sequence would pass T_max.
  struct Written {
    Tensor k, v;
    int64_t first_slot = 0;
  };
  Written append(const Tensor& k, const Tensor& v);

  Tensor k() const;  // (B,g,filled,dk) narrow view of the storage
  Tensor v() const;
  NonFinite k_counts() const;  // NaN / inf in the filled part, kept per slot at append time
  NonFinite v_counts() const;

 private:
  Tensor k_, v_;
  int64_t t_max_ = 0, length_ = 0;
  CachePolicy policy_;
  std::vector<int64_t> slot_pos_;
  std::vector<NonFinite> k_slot_counts_, v_slot_counts_;
};

// [SECTION] paged cache

class BlockPool {
 public:
  BlockPool(int64_t blocks, int64_t block_size);
  int64_t block_size() const { return block_size_; }
  int64_t blocks() const { return blocks_; }
  int64_t allocate();  // lowest free block; Error when every block is in use
  void release(int64_t block);
  const std::vector<int64_t>& free_list() const { return free_; }  // ascending
  int64_t in_use() const { return blocks_ - static_cast<int64_t>(free_.size()); }

 private:
  int64_t blocks_, block_size_;
  std::vector<int64_t> free_;
};

struct BlockTable {
  std::vector<int64_t> blocks;  // logical block i -> physical block
  int64_t length = 0;           // tokens written
};

// Grows `table` to hold new_length tokens, taking blocks from the pool as they are needed.
void reserve_blocks(BlockPool& pool, BlockTable& table, int64_t new_length);
// Gives every block of `table` back to the pool.
void release_blocks(BlockPool& pool, BlockTable& table);

// One layer's K and V block pools: each one storage (blocks,g,block,dk).
class PagedKv {
 public:
  PagedKv(int64_t blocks, int64_t kv_heads, int64_t block_size, int64_t head_dim);
  const Tensor& k_pool() const { return k_; }
  const Tensor& v_pool() const { return v_; }
  int64_t storage_bytes() const;
  // Writes k, v (1,g,n,dk) as positions first..first+n-1 of the sequence (blocks reserved).
  void write(const BlockTable& table, int64_t first, const Tensor& k, const Tensor& v);
  // The sequence's first t positions gathered into a new (1,g,t,dk) tensor: the test oracle
  // and the picture of "what the block table means"; decode never gathers.
  Tensor gather_k(const BlockTable& table, int64_t t) const;
  Tensor gather_v(const BlockTable& table, int64_t t) const;

 private:
  Tensor k_, v_;
};

// scores (1,h,n,t) = q (1,h,n,dk) · K of the sequence's t positions, read block by block in
// place; query head i reads K/V head i / (h/g).
Tensor paged_qk(const Tensor& q, const Tensor& k_pool, const BlockTable& table, int64_t t);
// ctx (1,h,n,dk) = alpha (1,h,n,t) · V, block by block, accumulating.
Tensor paged_av(const Tensor& alpha, const Tensor& v_pool, const BlockTable& table, int64_t t);

}  // namespace attnsim
