// safetensors, read without trusting the file (https://huggingface.co/docs/safetensors):
//   bytes 0..7      N, the header length, unsigned 64-bit little-endian
//   bytes 8..8+N    a JSON object: {"NAME": {"dtype": "F32", "shape": [768, 2304],
//                   "data_offsets": [begin, end]}, ..., "__metadata__": {...}}
//   bytes 8+N..     the data buffer; a tensor's bytes are [begin, end) of it, row-major, little-endian
// A model is one model.safetensors, or shards named by model.safetensors.index.json
// ({"weight_map": {"NAME": "model-00001-of-00002.safetensors", ...}}).
//
// Everything is checked from the headers before a tensor byte is read: the length against
// the file, the JSON's nesting (engine/nesting.h), each dtype, shape (checked products) and
// data_offsets (inside the buffer, end - begin = numel · itemsize, no two tensors
// overlapping). A tensor becomes float32 (F32, F16, BF16) only when asked for, and a NaN or
// ±inf in it is an Error naming the tensor and the element.
//
// The work is bounded as well as the sizes: at most kMaxShards shards and kMaxTensors
// tensors, each name found by hash (a folder of 60,000 tensors opens in linear time).
//
// Tensor bytes are copied with pread, never mapped: a mapped file that shrinks while a pass
// reads it (another process truncating a shard) raises SIGBUS, which no Error can report;
// pread reports the short read as "file shrank", one line. The copy costs nothing extra: the
// bytes are converted into a new float32 tensor either way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/read_file.h"
#include "engine/tensor.h"

namespace attnsim::model::hf {

struct TensorInfo {
  std::string name;
  std::string dtype;   // "F32", "F16", "BF16", ... as the header writes it
  Dims shape;
  int64_t begin = 0;   // absolute byte offsets in the file
  int64_t end = 0;
  size_t shard = 0;    // index into SafetensorsSet's files
  int64_t numel() const;
};

// Real models: Llama 3.1 405B has 191 shards, DeepSeek-V3 about 92,000 tensors.
inline constexpr size_t kMaxShards = 4096;
inline constexpr size_t kMaxTensors = 1'000'000;

class SafetensorsSet {
 public:
  // DIR/model.safetensors, or the shards of DIR/model.safetensors.index.json. Reads and
  // checks every header; maps the files. Throws Error naming the file and the problem.
  static SafetensorsSet open_dir(const std::string& dir);
  // One file (tests, the fuzzer, tools).
  static SafetensorsSet open_file(const std::string& path);
  // The header checks alone, on bytes in memory: what open_file does to a file's first 8 + N
  // bytes, given the file's full size (the fuzzer's entry point).
  static std::vector<TensorInfo> parse_header(const uint8_t* data, size_t size, int64_t file_size,
                                              const std::string& what);

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find(const std::string& name) const;  // nullptr when absent
  // The tensor as float32, contiguous, shape as stored. Error for another dtype or a
  // non-finite element ("h.0.attn.c_attn.weight holds NaN at element 17 (of 1769472)").
  Tensor read_f32(const TensorInfo& info) const;
  Tensor read_f32(const std::string& name) const;  // Error when absent

 private:
  void index_tensors(const std::string& what);  // by_name_ from tensors_; Error on a repeat

  std::vector<std::shared_ptr<RegularFile>> files_;
  std::vector<std::string> paths_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> by_name_;  // name -> index into tensors_
};

// Bytes of one element of a safetensors dtype, or 0 when the name is not one.
int64_t dtype_size(const std::string& dtype);

}  // namespace attnsim::model::hf
