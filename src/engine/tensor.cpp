#include "tensor.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <sstream>
#include <vector>

#include <sys/mman.h>

#include "checked.h"
#include "error.h"

namespace attnsim {

int64_t itemsize(DType dtype) { return dtype == DType::F32 ? 4 : 1; }
const char* dtype_name(DType dtype) { return dtype == DType::F32 ? "float32" : "bool"; }

// [SECTION] buffer pool
// A forward pass allocates the same few sizes on every run. Fresh memory from the kernel
// costs a page fault per 4 KiB on first touch, which at the article's size (about 100 MiB
// per pass) costs more than the softmax. Freed buffers are kept by exact size, up to
// kPoolCapacity bytes in all, and handed out again. When a buffer would not fit, the ones
// kept longest are freed to make room: a long session (the app opening GPT-2, then a small
// lesson run) keeps the sizes it uses now, not the first gigabyte it ever freed.
namespace {

constexpr int64_t kPoolCapacity = int64_t{1} << 30;

class BufferPool {
 public:
  std::byte* acquire(int64_t n) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.find(n);
      if (it != free_.end()) {
        std::byte* p = it->second.buffer;
        age_.erase(it->second.age);
        free_.erase(it);
        cached_ -= n;
        return p;
      }
    }
    return fresh(n);
  }
  // Touches and keeps a fresh buffer of n bytes; false when it is larger than the pool.
  bool prefault(int64_t n) {
    if (n > kPoolCapacity) return false;
    std::byte* p = fresh(n);
    std::memset(p, 0, static_cast<size_t>(n));
    release(p, n);
    return true;
  }
  int64_t cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }
  void release(std::byte* p, int64_t n) {
    std::vector<std::byte*> evicted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (n > kPoolCapacity) {
        evicted.push_back(p);
      } else {
        while (cached_ + n > kPoolCapacity) evicted.push_back(evict_oldest());
        const uint64_t age = next_age_++;
        age_.emplace(age, free_.emplace(n, Kept{p, age}));
        cached_ += n;
      }
    }
    for (std::byte* q : evicted) std::free(q);  // outside the lock
  }

 private:
  struct Kept {
    std::byte* buffer;
    uint64_t age;  // order of release: the smallest was kept longest
  };
  using Free = std::multimap<int64_t, Kept>;

  std::byte* evict_oldest() {  // with the lock held; the pool is not empty
    const auto oldest = age_.begin();
    const Free::iterator it = oldest->second;
    std::byte* p = it->second.buffer;
    cached_ -= it->first;
    free_.erase(it);
    age_.erase(oldest);
    return p;
  }

  // Buffers of 4 MiB and more are aligned to 2 MiB and marked for transparent huge pages
  // (Linux's default "madvise" mode): their first touch then faults once per 2 MiB instead of
  // once per 4 KiB. Touching 200 MiB took 0.9-1.1 s in 4 KiB pages on this virtual machine,
  // 30-625 ms in huge pages (more when the kernel has to compact memory first).
  static std::byte* fresh(int64_t n) {
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t bytes = static_cast<size_t>(std::max<int64_t>(n, 1));
    const size_t align = bytes >= 2 * kHuge ? kHuge : 64;
    void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
    if (!p) throw std::bad_alloc();
    if (align == kHuge) madvise(p, (bytes + align - 1) / align * align, MADV_HUGEPAGE);  // a hint: failure is harmless
    return static_cast<std::byte*>(p);
  }

  std::mutex mutex_;
  Free free_;                              // by size, for acquire
  std::map<uint64_t, Free::iterator> age_;  // by age, for eviction
  uint64_t next_age_ = 0;
  int64_t cached_ = 0;
};

// Never destroyed: storages held by other statics may be released during exit.
BufferPool& pool() {
  static BufferPool* instance = new BufferPool;
  return *instance;
}

std::atomic<int64_t> next_storage_id{1};

}  // namespace

void BufferRelease::operator()(std::byte* p) const { pool().release(p, nbytes); }

void prefault_buffers(const std::vector<int64_t>& sizes) {
  for (int64_t n : sizes)
    if (n > 0) pool().prefault(n);
}

int64_t pooled_buffer_bytes() { return pool().cached(); }

Storage::Storage(int64_t n, DType dt)
    : id(next_storage_id++), dtype(dt), nbytes(n), bytes(pool().acquire(n), BufferRelease{n}) {}

std::string format_dims(const Dims& dims) {
  std::ostringstream out;
  out << '(';
  for (size_t i = 0; i < dims.size(); ++i) out << (i ? ", " : "") << dims[i];
  if (dims.size() == 1) out << ',';
  out << ')';
  return out.str();
}

Dims contiguous_strides(const Dims& shape) {
  Dims strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    // A zero-sized dim passes the element count, so the strides need their own check:
    // (0, 10^14, 10^7) has no elements but a first stride past int64.
    strides[d] = checked_mul(strides[d + 1], std::max<int64_t>(shape[d + 1], 1),
                             "strides of shape " + format_dims(shape));
  return strides;
}

int64_t numel_of(const Dims& shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(n, s, &n)) return checked_product(shape, "elements of shape " + format_dims(shape));
  return n;
}

// [SECTION] construction

Tensor::Tensor(std::shared_ptr<Storage> storage, int64_t offset, Dims shape, Dims strides)
    : storage_(std::move(storage)),
      offset_(offset),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      dtype_(storage_->dtype) {}

Tensor Tensor::empty(const Dims& shape, DType dtype) {
  for (int64_t s : shape)
    if (s < 0) throw Error("negative size in shape " + format_dims(shape));
  const int64_t bytes = checked_mul(numel_of(shape), itemsize(dtype), "bytes of a tensor of shape " + format_dims(shape));
  auto storage = std::make_shared<Storage>(bytes, dtype);
  return Tensor(std::move(storage), 0, shape, contiguous_strides(shape));
}

Tensor Tensor::zeros(const Dims& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  std::memset(t.storage_->bytes.get(), 0, static_cast<size_t>(t.storage_->nbytes));
  return t;
}

Tensor Tensor::from_values(const Dims& shape, const std::vector<float>& values) {
  if (static_cast<int64_t>(values.size()) != numel_of(shape))
    throw Error("from_values: " + std::to_string(values.size()) + " values for shape " +
                format_dims(shape));
  Tensor t = empty(shape);
  std::copy(values.begin(), values.end(), t.f32());
  return t;
}

// [SECTION] access

int64_t Tensor::size(int64_t d) const {
  if (d < 0) d += dim();
  if (d < 0 || d >= dim()) throw Error("dimension out of range for shape " + format_dims(shape_));
  return shape_[d];
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (shape_[d] == 1) continue;  // a size-1 dim's stride is never used
    if (strides_[d] != expected) return false;
    expected *= shape_[d];
  }
  return true;
}

bool Tensor::is_dense() const {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the dims that move
  for (int64_t d = 0; d < dim(); ++d) {
    if (shape_[d] == 0) return true;  // no elements
    if (shape_[d] != 1) dims.emplace_back(strides_[d], shape_[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

int64_t Tensor::storage_index(const Dims& index) const {
  if (static_cast<int64_t>(index.size()) != dim())
    throw Error("index " + format_dims(index) + " does not match shape " + format_dims(shape_));
  int64_t pos = offset_;
  for (int64_t d = 0; d < dim(); ++d) {
    if (index[d] < 0 || index[d] >= shape_[d])
      throw Error("index " + format_dims(index) + " out of range for shape " + format_dims(shape_));
    pos += index[d] * strides_[d];
  }
  return pos;
}

float Tensor::at(const Dims& index) const {
  const int64_t pos = storage_index(index);
  const std::byte* base = storage_->bytes.get();
  if (dtype_ == DType::Bool) return reinterpret_cast<const uint8_t*>(base)[pos] ? 1.0f : 0.0f;
  return reinterpret_cast<const float*>(base)[pos];
}

std::vector<float> Tensor::to_vector() const {
  std::vector<float> out(static_cast<size_t>(numel()));
  const std::byte* base = storage_->bytes.get();
  if (dtype_ == DType::Bool) {
    auto* p = reinterpret_cast<const uint8_t*>(base);
    for_each_element(*this, [&](int64_t i, int64_t pos) { out[i] = p[pos] ? 1.0f : 0.0f; });
  } else {
    auto* p = reinterpret_cast<const float*>(base);
    for_each_element(*this, [&](int64_t i, int64_t pos) { out[i] = p[pos]; });
  }
  return out;
}

// [SECTION] views

// PyTorch's computeStride: walk the old dims from the back in "chunks" of dims that are
// contiguous with each other; each chunk must be covered exactly by a run of new dims.
bool view_strides(const Dims& old_shape, const Dims& old_strides, const Dims& new_shape,
                  Dims* new_strides) {
  new_strides->assign(new_shape.size(), 0);
  if (old_shape.empty()) {  // scalar: every new dim has size 1
    for (auto& s : *new_strides) s = 1;
    return true;
  }
  if (numel_of(old_shape) == 0) {
    *new_strides = contiguous_strides(new_shape);
    return true;
  }
  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_shape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_shape[tensor_d];
    const bool chunk_ends =
        tensor_d == 0 || (old_shape[tensor_d - 1] != 1 &&
                          old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
      (*new_strides)[view_d] = view_numel * chunk_base_stride;
      view_numel *= new_shape[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return false;
    if (tensor_d > 0) {
      chunk_base_stride = old_strides[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  return view_d == -1;
}

// Resolves one -1 and checks the element count.
static Dims infer_shape(const Dims& shape, int64_t numel, const Dims& from) {
  Dims out = shape;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) throw Error("only one dimension can be -1 in " + format_dims(shape));
      infer = static_cast<int>(i);
    } else if (out[i] < 0) {
      throw Error("invalid size " + std::to_string(out[i]) + " in shape " + format_dims(shape));
    } else {
      known *= out[i];
    }
  }
  if (infer >= 0 && known != 0 && numel % known == 0) out[infer] = numel / known;
  if (numel_of(out) != numel || (infer >= 0 && known == 0))
    throw Error("shape " + format_dims(shape) + " is invalid for input of shape " +
                format_dims(from) + " (" + std::to_string(numel) + " elements)");
  return out;
}

Tensor Tensor::view(const Dims& shape) const {
  const Dims target = infer_shape(shape, numel(), shape_);
  Dims strides;
  if (!view_strides(shape_, strides_, target, &strides))
    throw Error("view size is not compatible with input tensor's size and stride: shape " +
                format_dims(shape_) + " with strides " + format_dims(strides_) +
                " cannot be seen as " + format_dims(target) +
                " without a copy (at least one dimension spans across two contiguous "
                "subspaces); call contiguous() first or use reshape()");
  return Tensor(storage_, offset_, target, strides);
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  if (a < 0) a += dim();
  if (b < 0) b += dim();
  if (a < 0 || b < 0 || a >= dim() || b >= dim())
    throw Error("transpose dims out of range for shape " + format_dims(shape_));
  Dims shape = shape_, strides = strides_;
  std::swap(shape[a], shape[b]);
  std::swap(strides[a], strides[b]);
  return Tensor(storage_, offset_, shape, strides);
}

Tensor Tensor::permute(const Dims& order) const {
  if (static_cast<int64_t>(order.size()) != dim())
    throw Error("permute order " + format_dims(order) + " does not match shape " +
                format_dims(shape_));
  Dims shape(order.size()), strides(order.size());
  std::vector<bool> seen(order.size(), false);
  for (size_t i = 0; i < order.size(); ++i) {
    const int64_t d = order[i];
    if (d < 0 || d >= dim() || seen[d])
      throw Error("permute order " + format_dims(order) + " is not a permutation");
    seen[d] = true;
    shape[i] = shape_[d];
    strides[i] = strides_[d];
  }
  return Tensor(storage_, offset_, shape, strides);
}

Tensor Tensor::expand(const Dims& shape) const {
  if (shape.size() < shape_.size())
    throw Error("cannot expand " + format_dims(shape_) + " to fewer dims " + format_dims(shape));
  const size_t lead = shape.size() - shape_.size();
  Dims strides(shape.size(), 0);
  for (size_t i = 0; i < shape_.size(); ++i) {
    const int64_t want = shape[lead + i];
    if (shape_[i] == want) {
      strides[lead + i] = strides_[i];
    } else if (shape_[i] != 1) {
      throw Error("cannot broadcast " + format_dims(shape_) + " to " + format_dims(shape));
    }
  }
  return Tensor(storage_, offset_, shape, strides);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  if (d < 0) d += dim();
  if (d < 0 || d >= dim() || start < 0 || length < 0 || start + length > shape_[d])
    throw Error("narrow out of range for shape " + format_dims(shape_));
  Dims shape = shape_;
  shape[d] = length;
  return Tensor(storage_, offset_ + start * strides_[d], shape, strides_);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  if (d < 0) d += dim() + 1;
  if (d < 0 || d > dim()) throw Error("unsqueeze position out of range for shape " + format_dims(shape_));
  Dims shape = shape_, strides = strides_;
  // the new axis has one element, so its stride is never used; PyTorch's choice keeps
  // contiguity: the stride the axis after it would step over
  const int64_t stride = d < dim() ? strides_[d] * shape_[d] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return Tensor(storage_, offset_, shape, strides);
}

Tensor Tensor::clone() const {
  Tensor out = empty(shape_, dtype_);
  if (dtype_ == DType::Bool) {
    const uint8_t* src = reinterpret_cast<const uint8_t*>(storage_->bytes.get());
    uint8_t* dst = out.b8();
    for_each_element(*this, [&](int64_t i, int64_t pos) { dst[i] = src[pos]; });
    return out;
  }
  const float* src = reinterpret_cast<const float*>(storage_->bytes.get());
  float* dst = out.f32();
  if (dim() == 0) {
    dst[0] = src[offset_];
    return out;
  }
  // Copy row by row along the innermost dim: a tight loop the compiler vectorises when the
  // innermost stride is 1 (the common case after a transpose of outer dims).
  const int64_t inner = shape_.back();
  const int64_t inner_stride = strides_.back();
  const Tensor rows = inner == 0 ? *this : narrow(dim() - 1, 0, 1);
  float* row_out = dst;
  for_each_element(rows, [&](int64_t, int64_t pos) {
    const float* row_in = src + pos;
    if (inner_stride == 1) {
      std::memcpy(row_out, row_in, static_cast<size_t>(inner) * sizeof(float));
    } else {
      for (int64_t j = 0; j < inner; ++j) row_out[j] = row_in[j * inner_stride];
    }
    row_out += inner;
  });
  return out;
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::reshape(const Dims& shape) const {
  const Dims target = infer_shape(shape, numel(), shape_);
  Dims strides;
  if (view_strides(shape_, strides_, target, &strides))
    return Tensor(storage_, offset_, target, strides);
  return clone().view(target);
}

Dims broadcast_shapes(const Dims& a, const Dims& b) {
  const size_t n = std::max(a.size(), b.size());
  Dims out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error("shapes " + format_dims(a) + " and " + format_dims(b) +
                  " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace attnsim
