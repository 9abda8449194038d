#include "model/formats/hf_safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <unordered_set>

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

  if (j.size() > kMaxTensors)
    throw Error(what + ": the header lists " + std::to_string(j.size()) + " tensors; attnsim opens at most " +
                std::to_string(kMaxTensors));
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
std::string read_bytes(const RegularFile& f, int64_t offset, int64_t n) {
  std::string out(static_cast<size_t>(n), '\0');
  f.read_at(offset, out.data(), n);
  return out;
}

std::vector<TensorInfo> read_header(const RegularFile& f, const std::string& path) {
  std::string head = f.size() >= 8 ? read_bytes(f, 0, 8) : std::string();
  if (head.size() == 8) {
    const uint64_t n = read_le64(reinterpret_cast<const uint8_t*>(head.data()));
    if (n <= static_cast<uint64_t>(f.size() - 8) && n <= static_cast<uint64_t>(kMaxHeaderBytes))
      head += read_bytes(f, 8, static_cast<int64_t>(n));
  }
  return SafetensorsSet::parse_header(reinterpret_cast<const uint8_t*>(head.data()), head.size(), f.size(), path);
}

}  // namespace

SafetensorsSet SafetensorsSet::open_file(const std::string& path) {
  SafetensorsSet set;
  auto f = std::make_shared<RegularFile>(path);
  set.tensors_ = read_header(*f, path);
  set.files_.push_back(std::move(f));
  set.paths_.push_back(path);
  set.index_tensors(path);
  return set;
}

namespace {

// model.safetensors.index.json's weight_map, read as a stream of SAX events: each pair is
// checked as it arrives and the read stops at the first that breaks a bound, so a 13 MB index
// naming 400,000 shards is refused after shard 4,097 without building its whole tree.
//   {"metadata": {...}, "weight_map": {"NAME": "FILE", ...}}
class WeightMapReader : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit WeightMapReader(std::string index) : index_(std::move(index)) {}

  std::vector<std::pair<std::string, size_t>> tensors;  // name -> index into shards
  std::vector<std::string> shards;                       // file names, in first-seen order
  std::string error;                                     // why the read stopped, if it did
  bool saw_map = false;

  bool null() override { return value("null"); }
  bool boolean(bool) override { return value("a boolean"); }
  bool number_integer(number_integer_t) override { return value("a number"); }
  bool number_unsigned(number_unsigned_t) override { return value("a number"); }
  bool number_float(number_float_t, const string_t&) override { return value("a number"); }
  bool binary(binary_t&) override { return value("binary data"); }
  bool string(string_t& file) override {
    if (!in_map()) return true;
    if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
      return fail("shard '" + one_line(file) + "' must be a plain file name in the model folder");
    const auto [it, fresh] = shard_of_file_.try_emplace(file, shards.size());
    if (fresh) {
      shards.push_back(file);
      if (shards.size() > kMaxShards)
        return fail("the weight_map names more than " + std::to_string(kMaxShards) +
                    " shard files; attnsim opens at most that many");
    }
    if (!names_.insert(key_).second) return fail("'" + one_line(key_) + "' is listed twice");
    tensors.emplace_back(key_, it->second);
    if (tensors.size() > kMaxTensors)
      return fail("the weight_map lists more than " + std::to_string(kMaxTensors) + " tensors; attnsim opens at most that many");
    return true;
  }
  bool start_object(std::size_t) override {
    if (in_map()) return fail("the shard of '" + one_line(key_) + "' must be a file name, not an object");
    if (++depth_ == 2 && key_ == "weight_map") {  // the top-level object's "weight_map"
      map_depth_ = 2;
      saw_map = true;
    }
    return true;
  }
  bool end_object() override {
    if (depth_-- == map_depth_) map_depth_ = -1;
    return true;
  }
  bool start_array(std::size_t) override {
    if (in_map()) return fail("the shard of '" + one_line(key_) + "' must be a file name, not a list");
    if (depth_ == 1 && key_ == "weight_map") return fail("needs a \"weight_map\" object {tensor name: shard file}");
    ++depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    return fail(std::string("not valid JSON (") + e.what() + ")");
  }

 private:
  bool in_map() const { return depth_ == map_depth_; }
  bool value(const char* what) {
    if (depth_ == 1 && key_ == "weight_map") return fail("needs a \"weight_map\" object {tensor name: shard file}");
    return in_map() ? fail("the shard of '" + one_line(key_) + "' must be a file name, not " + what) : true;
  }
  bool fail(std::string why) {
    error = index_ + ": " + std::move(why);
    return false;
  }

  std::string index_, key_;
  int depth_ = 0, map_depth_ = -1;
  std::unordered_map<std::string, size_t> shard_of_file_;
  std::unordered_set<std::string> names_;
};

}  // namespace

SafetensorsSet SafetensorsSet::open_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string single = dir + "/model.safetensors", index = dir + "/model.safetensors.index.json";
  std::error_code ec;
  if (fs::exists(single, ec)) return open_file(single);
  if (!fs::exists(index, ec))
    throw Error(dir + ": no model.safetensors and no model.safetensors.index.json (attnsim reads safetensors, not pytorch_model.bin)");
  const std::string text = read_text_file(index, kMaxIndexBytes);
  if (const auto at = too_deep(text, Syntax::Json))
    throw Error(index + ": nested deeper than " + std::to_string(kMaxNesting) + " levels at byte " + std::to_string(*at));
  WeightMapReader map(index);
  if (!nlohmann::json::sax_parse(text, &map) || !map.error.empty())
    throw Error(map.error.empty() ? index + ": not valid JSON" : map.error);
  if (!map.saw_map) throw Error(index + ": needs a \"weight_map\" object {tensor name: shard file}");
  if (map.shards.empty()) throw Error(index + ": the weight_map names no shard");
  SafetensorsSet set;
  for (size_t s = 0; s < map.shards.size(); ++s) {
    const std::string path = dir + "/" + map.shards[s];
    auto f = std::make_shared<RegularFile>(path);
    std::vector<TensorInfo> infos = read_header(*f, path);
    if (set.tensors_.size() + infos.size() > kMaxTensors)
      throw Error(path + ": the shards hold more than " + std::to_string(kMaxTensors) +
                  " tensors; attnsim opens at most that many");
    for (TensorInfo& t : infos) {
      t.shard = s;
      set.tensors_.push_back(std::move(t));
    }
    set.files_.push_back(std::move(f));
    set.paths_.push_back(path);
  }
  set.index_tensors(index);
  // the index and the shards must agree both ways: every listed tensor where it says, and
  // no shard tensor the index leaves out
  for (const auto& [name, shard] : map.tensors) {
    const TensorInfo* t = set.find(name);
    if (!t) throw Error(index + ": '" + one_line(name) + "' is not in " + one_line(map.shards[shard]));
    if (t->shard != shard)
      throw Error(index + ": '" + one_line(name) + "' is in " + set.paths_[t->shard] + ", not in " +
                  one_line(map.shards[shard]));
  }
  if (set.tensors_.size() != map.tensors.size()) {
    std::unordered_set<std::string> listed;
    for (const auto& [name, shard] : map.tensors) listed.insert(name);
    for (const TensorInfo& t : set.tensors_)
      if (!listed.count(t.name))
        throw Error(index + ": the weight_map does not list '" + one_line(t.name) + "' of " + set.paths_[t.shard]);
  }
  return set;
}

void SafetensorsSet::index_tensors(const std::string& what) {
  by_name_.clear();
  by_name_.reserve(tensors_.size());
  for (size_t k = 0; k < tensors_.size(); ++k)
    if (!by_name_.emplace(tensors_[k].name, k).second)
      throw Error(what + ": tensor '" + one_line(tensors_[k].name) + "' is in two shards");
}

const TensorInfo* SafetensorsSet::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
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
  const RegularFile& file = *files_[info.shard];
  // little-endian on disk, as on every target attnsim builds for (x86-64, WebAssembly)
  if (info.dtype == "F32") {
    file.read_at(info.begin, dst, n * 4);
  } else {  // 16-bit values, widened a chunk at a time; one loop per format, so each vectorises
    const bool bf16 = info.dtype == "BF16";
    constexpr int64_t kChunk = int64_t{1} << 18;
    std::vector<uint16_t> buf(static_cast<size_t>(std::min(n, kChunk)));
    for (int64_t at = 0; at < n; at += kChunk) {
      const int64_t m = std::min(kChunk, n - at);
      file.read_at(info.begin + 2 * at, buf.data(), 2 * m);
      if (bf16)
        for (int64_t i = 0; i < m; ++i) dst[at + i] = bfloat16_bits_to_float(buf[i]);
      else
        for (int64_t i = 0; i < m; ++i) dst[at + i] = half_bits_to_float(buf[i]);
    }
  }
  // every value finite: an exponent of all ones is inf or NaN. A branch-free pass (it
  // vectorises: half-precision layers are widened again on every call); the element is
  // looked for only when one is there.
  uint32_t any = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, dst + i, sizeof u);
    any |= static_cast<uint32_t>((u & 0x7f800000u) == 0x7f800000u);
  }
  for (int64_t i = 0; any && i < n; ++i)
    if (!std::isfinite(dst[i]))
      throw Error(path + ": tensor '" + one_line(info.name) + "' holds " + (std::isnan(dst[i]) ? "NaN" : "inf") +
                  " at element " + std::to_string(i) + " (of " + std::to_string(n) + ")");
  return out;
}

}  // namespace attnsim::model::hf
