#include "mask.h"

#include <sstream>

#include "error.h"

namespace attnsim {

const char* const kMaskSpecHelp =
    "Mask spec: comma-separated parts, combined with OR (true = hidden).\n"
    "  causal                 query i does not see keys after i\n"
    "  key-padding=L1:L2:..   per-batch key lengths; keys past the length are hidden\n"
    "  query-padding=L1:L2:.. per-batch query lengths; padded query rows hide every key\n"
    "                         (a fully hidden row: softmax gives NaN, as in PyTorch)\n"
    "  side=right|left        where the padding sits (default right)\n"
    "  none                   no mask\n"
    "Example: --mask causal,key-padding=5:3,side=left";

// [SECTION] parsing

static std::vector<int64_t> parse_lengths(const std::string& part, const std::string& value) {
  std::vector<int64_t> lengths;
  std::stringstream in(value);
  std::string item;
  while (std::getline(in, item, ':')) {
    size_t used = 0;
    long long n = -1;
    try {
      n = std::stoll(item, &used);
    } catch (...) {
      used = 0;
    }
    if (item.empty() || used != item.size() || n < 0)
      throw Error("mask part '" + part + "': '" + item + "' is not a length (want e.g. 5:3)");
    lengths.push_back(n);
  }
  if (lengths.empty()) throw Error("mask part '" + part + "' has no lengths (want e.g. 5:3)");
  return lengths;
}

MaskSpec parse_mask_spec(const std::string& text) {
  MaskSpec spec;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty() || part == "none") continue;
    const size_t eq = part.find('=');
    const std::string key = part.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : part.substr(eq + 1);
    if (key == "causal" && eq == std::string::npos) {
      spec.causal = true;
    } else if (key == "key-padding") {
      spec.key_lengths = parse_lengths(part, value);
    } else if (key == "query-padding") {
      spec.query_lengths = parse_lengths(part, value);
    } else if (key == "side" && (value == "left" || value == "right")) {
      spec.side = value == "left" ? PadSide::Left : PadSide::Right;
    } else {
      throw Error("unknown mask part '" + part +
                  "' (valid: causal, key-padding=L:L.., query-padding=L:L.., side=left|right, none)");
    }
  }
  return spec;
}

std::string format_mask_spec(const MaskSpec& spec) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ",") + s; };
  auto lengths = [](const std::vector<int64_t>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ":" : "") + std::to_string(v[i]);
    return s;
  };
  if (spec.causal) add("causal");
  if (!spec.key_lengths.empty()) add("key-padding=" + lengths(spec.key_lengths));
  if (!spec.query_lengths.empty()) add("query-padding=" + lengths(spec.query_lengths));
  if (spec.side == PadSide::Left && (!spec.key_lengths.empty() || !spec.query_lengths.empty()))
    add("side=left");
  return out.empty() ? "none" : out;
}

// [SECTION] building

static void check_lengths(const char* what, const std::vector<int64_t>& lengths, int64_t batch,
                          int64_t limit) {
  if (lengths.empty()) return;
  if (static_cast<int64_t>(lengths.size()) != batch)
    throw Error(std::string(what) + " has " + std::to_string(lengths.size()) +
                " lengths but the batch has " + std::to_string(batch));
  for (int64_t len : lengths)
    if (len > limit)
      throw Error(std::string(what) + " length " + std::to_string(len) + " exceeds the sequence length " +
                  std::to_string(limit));
}

// Position p of a sequence of length t with `len` real tokens is padding?
static bool is_pad(int64_t p, int64_t len, int64_t t, PadSide side) {
  return side == PadSide::Right ? p >= len : p < t - len;
}

Tensor build_causal_mask(int64_t batch, int64_t tq, int64_t tk) {
  Tensor m = Tensor::empty({batch, 1, tq, tk}, DType::Bool);  // (B,1,Tq,Tk)
  uint8_t* p = m.b8();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < tq; ++i)
      for (int64_t j = 0; j < tk; ++j) *p++ = j > i;
  return m;
}

Tensor build_padding_mask(const MaskSpec& spec, int64_t batch, int64_t tq, int64_t tk) {
  check_lengths("key-padding", spec.key_lengths, batch, tk);
  check_lengths("query-padding", spec.query_lengths, batch, tq);
  Tensor m = Tensor::empty({batch, 1, tq, tk}, DType::Bool);  // (B,1,Tq,Tk)
  uint8_t* p = m.b8();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < tq; ++i) {
      const bool row_pad =
          !spec.query_lengths.empty() && is_pad(i, spec.query_lengths[b], tq, spec.side);
      for (int64_t j = 0; j < tk; ++j) {
        const bool col_pad =
            !spec.key_lengths.empty() && is_pad(j, spec.key_lengths[b], tk, spec.side);
        *p++ = row_pad || col_pad;
      }
    }
  return m;
}

Tensor build_mask(const MaskSpec& spec, int64_t batch, int64_t tq, int64_t tk) {
  if (spec.empty()) return {};
  const bool padding = !spec.key_lengths.empty() || !spec.query_lengths.empty();
  if (spec.causal && padding)
    return mask_or(build_causal_mask(batch, tq, tk), build_padding_mask(spec, batch, tq, tk));
  return spec.causal ? build_causal_mask(batch, tq, tk) : build_padding_mask(spec, batch, tq, tk);
}

// [SECTION] combining

Tensor mask_or(const Tensor& a, const Tensor& b) {
  if (a.dtype() != DType::Bool || b.dtype() != DType::Bool)
    throw Error("mask_or needs two bool masks");
  const Dims shape = broadcast_shapes(a.shape(), b.shape());
  Tensor out = Tensor::empty(shape, DType::Bool);
  const Tensor ea = a.expand(shape), eb = b.expand(shape);
  const uint8_t* pa = a.b8() - a.offset();
  const uint8_t* pb = b.b8() - b.offset();
  std::vector<uint8_t> va(static_cast<size_t>(out.numel()));
  for_each_element(ea, [&](int64_t i, int64_t pos) { va[i] = pa[pos]; });
  uint8_t* po = out.b8();
  for_each_element(eb, [&](int64_t i, int64_t pos) { po[i] = va[i] || pb[pos]; });
  return out;
}

Tensor mask_not(const Tensor& m) {
  if (m.dtype() != DType::Bool) throw Error("mask_not needs a bool mask");
  Tensor out = Tensor::empty(m.shape(), DType::Bool);
  const uint8_t* pm = m.b8() - m.offset();
  uint8_t* po = out.b8();
  for_each_element(m, [&](int64_t i, int64_t pos) { po[i] = !pm[pos]; });
  return out;
}

}  // namespace attnsim
