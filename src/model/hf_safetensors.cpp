#include "hf_safetensors.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "engine/checked.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/half.h"
#include "engine/nesting.h"
#include "engine/read_file.h"

namespace attnsim::model::hf {

// [SECTION] files

// HF's own reader refuses headers over 100 MB; a real one is a few hundred KB.
constexpr int64_t kMaxHeaderBytes = int64_t{100} << 20;
constexpr int64_t kMaxIndexBytes = int64_t{16} << 20;

// A regular file (engine/read_file.h) whose header is read by pread and whose data is
// mapped read-only on first use (pages come in as a tensor is converted).
class MappedFile : public RegularFile {
 public:
  using RegularFile::RegularFile;
  ~MappedFile() {
    if (map_ && map_ != MAP_FAILED) ::munmap(map_, static_cast<size_t>(size()));
  }

  // `n` bytes at `offset` (the header: never mapped, never trusted).
  std::string read(int64_t offset, int64_t n) const {
    std::string out(static_cast<size_t>(n), '\0');
    read_at(offset, out.data(), n);
    return out;
  }
  const uint8_t* data() const {
    if (!map_) {
      map_ = ::mmap(nullptr, static_cast<size_t>(size()), PROT_READ, MAP_PRIVATE, fd(), 0);
      if (map_ == MAP_FAILED) throw Error(path() + ": cannot map (" + std::strerror(errno) + ")");
    }
    return static_cast<const uint8_t*>(map_);
  }

 private:
  mutable void* map_ = nullptr;
};

int64_t dtype_size(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

int64_t TensorInfo::numel() const { return checked_product(shape, name + " elements"); }

// [SECTION] header

namespace {

uint64_t read_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

int64_t whole(const nlohmann::json& v, const std::string& what) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) throw Error(what + " " + std::to_string(u) + " does not fit in 64 bits");
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i < 0) throw Error(what + " is negative (" + std::to_string(i) + ")");
    return i;
  }
  throw Error(what + " must be a whole number, got " + v.dump().substr(0, 40));
}

}  // namespace

std::vector<TensorInfo> SafetensorsSet::parse_header(const uint8_t* data, size_t size, int64_t file_size,
                                                     const std::string& what) {
  if (file_size < 8 || size < 8)
    throw Error(what + ": " + std::to_string(file_size) + " bytes is too short for a safetensors file (8-byte header length first)");
  const uint64_t n = read_le64(data);
  const uint64_t room = static_cast<uint64_t>(file_size) - 8;
  if (n > room)
    throw Error(what + ": header length " + std::to_string(n) + " runs past the end of the file (" +
                std::to_string(file_size) + " bytes): not a safetensors file, or truncated");
  if (n > static_cast<uint64_t>(kMaxHeaderBytes))
    throw Error(what + ": header length " + std::to_string(n) + " is over the 100 MiB a safetensors header may have");
  if (n < 2) throw Error(what + ": header length " + std::to_string(n) + " is too short for a JSON object");
  if (size < 8 + n) throw Error(what + ": header truncated");
  const int64_t data_start = 8 + static_cast<int64_t>(n), data_size = file_size - data_start;
  const nlohmann::json j = parse_json(std::string_view(reinterpret_cast<const char*>(data) + 8, n), what + " header");
  if (!j.is_object()) throw Error(what + ": the header must be a JSON object, got " + std::string(j.type_name()));

  std::vector<TensorInfo> out;
  for (const auto& [name, v] : j.items()) {
    if (name == "__metadata__") continue;
    const std::string where = what + ": tensor '" + one_line(name) + "'";
    if (!v.is_object()) throw Error(where + " must be an object with dtype, shape and data_offsets");
    if (!v.contains("dtype") || !v["dtype"].is_string()) throw Error(where + " has no dtype string");
    if (!v.contains("shape") || !v["shape"].is_array()) throw Error(where + " has no shape array");
    if (!v.contains("data_offsets") || !v["data_offsets"].is_array() || v["data_offsets"].size() != 2)
      throw Error(where + " needs data_offsets [begin, end]");
    TensorInfo t;
    t.name = name;
    t.dtype = v["dtype"].get<std::string>();
    const int64_t item = dtype_size(t.dtype);
    if (item == 0) throw Error(where + " has unknown dtype '" + one_line(t.dtype) + "'");
    if (v["shape"].size() > 8) throw Error(where + " has " + std::to_string(v["shape"].size()) + " dimensions");
    for (const auto& s : v["shape"]) t.shape.push_back(whole(s, where + " shape entry"));
    const int64_t begin = whole(v["data_offsets"][0], where + " data_offsets begin");
    const int64_t end = whole(v["data_offsets"][1], where + " data_offsets end");
    if (begin > end) throw Error(where + " has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "]: begin after end");
    if (end > data_size)
      throw Error(where + " has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                  "] past the end of the data (" + std::to_string(data_size) + " bytes)");
    const int64_t bytes = checked_mul(checked_product(t.shape, where + " elements"), item, where + " bytes");
    if (end - begin != bytes)
      throw Error(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] hold " +
                  std::to_string(end - begin) + " bytes but " + t.dtype + " " + format_dims(t.shape) + " needs " +
                  std::to_string(bytes));
    t.begin = data_start + begin;
    t.end = data_start + end;
    out.push_back(std::move(t));
  }
  // no two tensors may share bytes
  std::vector<const TensorInfo*> by_start;
  for (const TensorInfo& t : out) by_start.push_back(&t);
  std::sort(by_start.begin(), by_start.end(), [](auto* a, auto* b) { return a->begin < b->begin || (a->begin == b->begin && a->end < b->end); });
  const TensorInfo* reach = nullptr;  // the non-empty tensor seen so far that ends last
  for (const TensorInfo* b : by_start) {
    if (b->end == b->begin) continue;  // an empty tensor holds no bytes
    if (reach && b->begin < reach->end) {
      const TensorInfo& a = *reach;
      throw Error(what + ": tensors '" + one_line(a.name) + "' and '" + one_line(b->name) +
                  "' overlap (data_offsets [" + std::to_string(a.begin - data_start) + ", " +
                  std::to_string(a.end - data_start) + "] and [" + std::to_string(b->begin - data_start) + ", " +
                  std::to_string(b->end - data_start) + "])");
    }
    if (!reach || b->end > reach->end) reach = b;
  }
  return out;
}

// [SECTION] opening

namespace {

// Reads the first 8 + N bytes of the file and checks them.
std::vector<TensorInfo> read_header(const MappedFile& f, const std::string& path) {
  std::string head = f.size() >= 8 ? f.read(0, 8) : std::string();
  std::vector<TensorInfo> infos;
  if (head.size() == 8) {
    const uint64_t n = read_le64(reinterpret_cast<const uint8_t*>(head.data()));
    if (n <= static_cast<uint64_t>(f.size() - 8) && n <= static_cast<uint64_t>(kMaxHeaderBytes))
      head += f.read(8, static_cast<int64_t>(n));
  }
  return SafetensorsSet::parse_header(reinterpret_cast<const uint8_t*>(head.data()), head.size(), f.size(), path);
}

}  // namespace

SafetensorsSet SafetensorsSet::open_file(const std::string& path) {
  SafetensorsSet set;
  auto f = std::make_shared<MappedFile>(path);
  set.tensors_ = read_header(*f, path);
  set.files_.push_back(std::move(f));
  set.paths_.push_back(path);
  return set;
}

SafetensorsSet SafetensorsSet::open_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string single = dir + "/model.safetensors", index = dir + "/model.safetensors.index.json";
  std::error_code ec;
  if (fs::exists(single, ec)) return open_file(single);
  if (!fs::exists(index, ec))
    throw Error(dir + ": no model.safetensors and no model.safetensors.index.json (attnsim reads safetensors, not pytorch_model.bin)");
  const nlohmann::json j = parse_json(read_text_file(index, kMaxIndexBytes), index);
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    throw Error(index + ": needs a \"weight_map\" object {tensor name: shard file}");
  SafetensorsSet set;
  std::vector<std::string> shards;
  for (const auto& [name, file] : j["weight_map"].items()) {
    if (!file.is_string()) throw Error(index + ": the shard of '" + one_line(name) + "' must be a file name");
    const std::string f = file.get<std::string>();
    if (f.empty() || f.find('/') != std::string::npos || f == "." || f == "..")
      throw Error(index + ": shard '" + one_line(f) + "' must be a plain file name in the model folder");
    if (std::find(shards.begin(), shards.end(), f) == shards.end()) shards.push_back(f);
  }
  if (shards.empty()) throw Error(index + ": the weight_map names no shard");
  for (size_t s = 0; s < shards.size(); ++s) {
    const std::string path = dir + "/" + shards[s];
    auto mf = std::make_shared<MappedFile>(path);
    for (TensorInfo& t : read_header(*mf, path)) {
      if (set.find(t.name)) throw Error(path + ": tensor '" + one_line(t.name) + "' is also in another shard");
      t.shard = s;
      set.tensors_.push_back(std::move(t));
    }
    set.files_.push_back(std::move(mf));
    set.paths_.push_back(path);
  }
  for (const auto& [name, file] : j["weight_map"].items()) {
    const TensorInfo* t = set.find(name);
    if (!t) throw Error(index + ": '" + one_line(name) + "' is not in " + file.get<std::string>());
    if (set.paths_[t->shard] != dir + "/" + file.get<std::string>())
      throw Error(index + ": '" + one_line(name) + "' is in " + set.paths_[t->shard] + ", not in " + file.get<std::string>());
  }
  return set;
}

const TensorInfo* SafetensorsSet::find(const std::string& name) const {
  for (const TensorInfo& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

// [SECTION] reading

Tensor SafetensorsSet::read_f32(const std::string& name) const {
  const TensorInfo* t = find(name);
  if (!t) throw Error("the model has no tensor '" + one_line(name) + "'");
  return read_f32(*t);
}

Tensor SafetensorsSet::read_f32(const TensorInfo& info) const {
  const std::string& path = paths_[info.shard];
  if (info.dtype != "F32" && info.dtype != "F16" && info.dtype != "BF16")
    throw Error(path + ": tensor '" + one_line(info.name) + "' is " + info.dtype + "; attnsim reads F32, F16 and BF16");
  const int64_t n = info.numel();
  Tensor out = Tensor::empty(info.shape.empty() ? Dims{} : info.shape);
  float* dst = out.f32();
  const uint8_t* src = files_[info.shard]->data() + info.begin;
  // little-endian on disk, as on every target attnsim builds for (x86-64, WebAssembly)
  if (info.dtype == "F32") {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
  } else {
    const bool bf16 = info.dtype == "BF16";
    for (int64_t i = 0; i < n; ++i) {
      uint16_t u;
      std::memcpy(&u, src + 2 * i, 2);
      dst[i] = bf16 ? bfloat16_bits_to_float(u) : half_bits_to_float(u);
    }
  }
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(dst[i]))
      throw Error(path + ": tensor '" + one_line(info.name) + "' holds " + (std::isnan(dst[i]) ? "NaN" : "inf") +
                  " at element " + std::to_string(i) + " (of " + std::to_string(n) + ")");
  return out;
}

}  // namespace attnsim::model::hf
