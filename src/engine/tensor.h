// Tensor: shared storage + offset + shape + strides, with PyTorch's view semantics.
//
// Stride rule (element strides, row-major): the element at index (i0, i1, ..., in) lives at
//   storage[offset + i0*stride0 + i1*stride1 + ... + in*striden].
// A view (view, transpose, permute, expand, narrow) returns a Tensor over the same Storage
// with new offset/shape/strides and never copies. contiguous() copies only when the strides
// are not already row-major; reshape() is view() when the strides allow it, else a copy.
// is_contiguous() is derived from shape and strides, never stored.
//
// Two dtypes: F32 (4 bytes) for values, Bool (1 byte, 0 or 1) for masks (true = hidden).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnsim {

using Dims = std::vector<int64_t>;

enum class DType { F32, Bool };
int64_t itemsize(DType dtype);
const char* dtype_name(DType dtype);

// Returns a buffer to the recycling pool (tensor.cpp) instead of the system.
struct BufferRelease {
  int64_t nbytes = 0;
  void operator()(std::byte* p) const;
};

// Fills the recycling pool with fresh buffers of these byte sizes, each touched once, so the
// next pass that allocates them finds them ready instead of paying first-touch page faults
// (about 4 ms per MiB on these virtual machines). The pool makes room by freeing the buffers
// it has kept longest; a size over its whole capacity is skipped. Any thread.
void prefault_buffers(const std::vector<int64_t>& sizes);
// Bytes the pool holds ready now (tests, and the app's warm-up check).
int64_t pooled_buffer_bytes();

// One allocation. `id` is unique per process; a Trace renumbers ids per forward pass.
struct Storage {
  Storage(int64_t bytes, DType dtype);
  int64_t id;
  DType dtype;
  int64_t nbytes;
  std::unique_ptr<std::byte[], BufferRelease> bytes;  // uninitialised until written
};

// "(2, 3, 4)" — used in every message and table.
std::string format_dims(const Dims& dims);
Dims contiguous_strides(const Dims& shape);
int64_t numel_of(const Dims& shape);

class Tensor {
 public:
  Tensor() = default;
  static Tensor empty(const Dims& shape, DType dtype = DType::F32);  // new storage
  static Tensor zeros(const Dims& shape, DType dtype = DType::F32);  // new storage
  static Tensor from_values(const Dims& shape, const std::vector<float>& values);

  bool defined() const { return storage_ != nullptr; }
  const Dims& shape() const { return shape_; }
  const Dims& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t numel() const { return numel_of(shape_); }
  int64_t nbytes() const { return numel() * itemsize(dtype_); }
  DType dtype() const { return dtype_; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  bool is_contiguous() const;
  // Its elements are exactly storage [offset, offset + numel) in some order (a permutation of
  // a contiguous tensor: a transpose, the view into heads): PyTorch's non-overlapping and dense.
  bool is_dense() const;
  bool shares_storage_with(const Tensor& other) const { return storage_ == other.storage_; }
  // The same elements of the same storage (offset, shape, strides): not merely equal values.
  // Both undefined counts as the same.
  bool same_view_as(const Tensor& other) const {
    return storage_ == other.storage_ && offset_ == other.offset_ && shape_ == other.shape_ &&
           strides_ == other.strides_ && dtype_ == other.dtype_;
  }

  // Pointers to element (0, ..., 0); index with strides().
  // Inline: the engine's loops call these per row.
  float* f32() { return reinterpret_cast<float*>(storage_->bytes.get()) + offset_; }
  const float* f32() const { return reinterpret_cast<const float*>(storage_->bytes.get()) + offset_; }
  uint8_t* b8() { return reinterpret_cast<uint8_t*>(storage_->bytes.get()) + offset_; }
  const uint8_t* b8() const { return reinterpret_cast<const uint8_t*>(storage_->bytes.get()) + offset_; }

  // Storage index (in elements) of a logical index, and the value there (Bool reads 0/1).
  int64_t storage_index(const Dims& index) const;
  float at(const Dims& index) const;

  Tensor view(const Dims& shape) const;             // view; throws Error if strides forbid
  Tensor transpose(int64_t a, int64_t b) const;     // view
  Tensor permute(const Dims& order) const;          // view
  Tensor expand(const Dims& shape) const;           // view; broadcast dims get stride 0
  Tensor narrow(int64_t d, int64_t start, int64_t length) const;  // view
  Tensor unsqueeze(int64_t d) const;                // view; a new axis of size 1 before d
  Tensor contiguous() const;                        // copies only when !is_contiguous()
  Tensor reshape(const Dims& shape) const;          // view if possible, else copies
  Tensor clone() const;                             // always copies

  // Logical contents in C order, as float (Bool gives 0/1).
  std::vector<float> to_vector() const;

 private:
  Tensor(std::shared_ptr<Storage> storage, int64_t offset, Dims shape, Dims strides);
  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;
  Dims shape_;
  Dims strides_;
  DType dtype_ = DType::F32;
};

// Strides a view of `shape` would need over a tensor with (old_shape, old_strides), or an
// empty result when no such strides exist (PyTorch's computeStride). Exposed for the app's
// "view without contiguous" explanation and for tests.
bool view_strides(const Dims& old_shape, const Dims& old_strides, const Dims& new_shape,
                  Dims* new_strides);

// Broadcast shape of a and b (NumPy rules) or Error naming both shapes.
Dims broadcast_shapes(const Dims& a, const Dims& b);

// Calls fn(linear_index, storage_index) for every element in C order.
template <class Fn>
void for_each_element(const Tensor& t, Fn&& fn) {
  const int64_t n = t.numel();
  if (n == 0) return;
  const int64_t nd = t.dim();
  const Dims& shape = t.shape();
  const Dims& strides = t.strides();
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  int64_t pos = t.offset();
  for (int64_t i = 0; i < n; ++i) {
    fn(i, pos);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        pos += strides[d];
        break;
      }
      pos -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace attnsim
