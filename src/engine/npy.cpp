#include "npy.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "atomic_file.h"
#include "checked.h"
#include "error.h"
#include "half.h"
#include "read_file.h"

namespace attnsim {

// Layout of a .npy file:
//   "\x93NUMPY" major minor  header_len (u16 for v1, u32 for v2/v3)  header  data
// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline so the data starts on a 64-byte boundary.

namespace {

constexpr size_t kMaxHeaderBytes = 1 << 20;  // numpy itself writes a few hundred bytes

std::string dict_value(const std::string& header, const std::string& key, const std::string& what) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw Error(what + ": corrupt .npy header: no '" + key + "' key");
  const size_t colon = header.find(':', k);
  if (colon == std::string::npos) throw Error(what + ": corrupt .npy header near '" + key + "'");
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) throw Error(what + ": corrupt .npy header near '" + key + "'");
  size_t end;
  if (header[start] == '(') {
    end = header.find(')', start);
    if (end == std::string::npos) throw Error(what + ": corrupt .npy header: unterminated shape");
    return header.substr(start, end - start + 1);
  }
  if (header[start] == '\'') {
    end = header.find('\'', start + 1);
    if (end == std::string::npos) throw Error(what + ": corrupt .npy header: unterminated string");
    return header.substr(start + 1, end - start - 1);
  }
  end = header.find_first_of(",}", start);
  if (end == std::string::npos) throw Error(what + ": corrupt .npy header near '" + key + "'");
  return header.substr(start, end - start);
}

Dims parse_shape(const std::string& text, const std::string& what) {
  Dims shape;
  std::string inner = text.substr(1, text.size() - 2);
  std::stringstream in(inner);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t a = item.find_first_not_of(" \t");
    if (a == std::string::npos) continue;  // trailing comma of a 1-tuple
    const size_t b = item.find_last_not_of(" \t");
    const std::string num = item.substr(a, b - a + 1);
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(num, &used);
    } catch (...) {
      used = 0;
    }
    if (used != num.size() || v < 0) throw Error(what + ": corrupt .npy shape " + text);
    shape.push_back(v);
  }
  return shape;
}

// What the header claims: dtype, shape, where the data starts and how many bytes it takes.
// `prefix` holds at least the header (the data may follow or not).
struct NpyHeader {
  DType dtype;         // what the loaded tensor holds
  bool half = false;   // '<f2': the file stores float16, widened to float32 on load
  Dims shape;
  size_t data_start;
  int64_t data_bytes;  // in the file: shape × the file's itemsize (2 for '<f2')
};

// Bytes before the header dict: magic, version, header length.
size_t npy_preamble(const std::string& prefix, const std::string& what, size_t* header_len) {
  if (prefix.size() < 10 || prefix.compare(0, 6, "\x93NUMPY") != 0)
    throw Error(what + ": not a .npy file (missing the \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(prefix[6]);
  if (major == 1) {
    *header_len = static_cast<unsigned char>(prefix[8]) | (static_cast<unsigned char>(prefix[9]) << 8);
    return 10;
  }
  if (major == 2 || major == 3) {
    if (prefix.size() < 12) throw Error(what + ": truncated .npy header");
    *header_len = 0;
    for (int i = 0; i < 4; ++i) *header_len |= static_cast<size_t>(static_cast<unsigned char>(prefix[8 + i])) << (8 * i);
    if (*header_len > kMaxHeaderBytes)
      throw Error(what + ": .npy header claims " + std::to_string(*header_len) + " bytes; a real header is under " +
                  std::to_string(kMaxHeaderBytes));
    return 12;
  }
  throw Error(what + ": unsupported .npy format version " + std::to_string(major));
}

NpyHeader parse_npy_header(const std::string& prefix, const std::string& what) {
  size_t header_len = 0;
  const size_t header_start = npy_preamble(prefix, what, &header_len);
  if (prefix.size() < header_start + header_len) throw Error(what + ": truncated .npy header");
  const std::string header = prefix.substr(header_start, header_len);
  if (header.find('{') == std::string::npos || header.find('}') == std::string::npos)
    throw Error(what + ": corrupt .npy header (no dict)");

  NpyHeader h;
  const std::string descr = dict_value(header, "descr", what);
  if (descr == "<f4") h.dtype = DType::F32;
  else if (descr == "<f2") {
    h.dtype = DType::F32;
    h.half = true;
  } else if (descr == "|b1" || descr == "<b1" || descr == "b1") h.dtype = DType::Bool;
  else
    throw Error(what + ": dtype '" + descr +
                "' is not supported (want float32 '<f4', float16 '<f2' or bool '|b1'; convert with .astype)");
  const std::string fortran = dict_value(header, "fortran_order", what);
  if (fortran == "True")
    throw Error(what + ": Fortran-order arrays are not supported (save with np.ascontiguousarray)");
  if (fortran != "False") throw Error(what + ": corrupt .npy header: fortran_order is '" + fortran + "'");
  const std::string shape_text = dict_value(header, "shape", what);
  if (shape_text.empty() || shape_text.front() != '(') throw Error(what + ": corrupt .npy header: shape is not a tuple");
  h.shape = parse_shape(shape_text, what);
  if (h.shape.size() > 32) throw Error(what + ": .npy shape has " + std::to_string(h.shape.size()) + " dimensions (at most 32)");
  h.data_start = header_start + header_len;
  std::vector<int64_t> factors = h.shape;
  factors.push_back(h.half ? 2 : itemsize(h.dtype));
  h.data_bytes = checked_product(factors, what + ": data bytes of shape " + format_dims(h.shape) + " × itemsize");
  return h;
}

void check_data_size(const NpyHeader& h, int64_t have, const std::string& what) {
  if (have != h.data_bytes)
    throw Error(what + ": data is " + std::to_string(have) + " bytes but shape " + format_dims(h.shape) + " of " +
                (h.half ? std::string("float16") : dtype_name(h.dtype)) + " needs " + std::to_string(h.data_bytes) + (have < h.data_bytes ? " (truncated)" : ""));
}

// The file's data as the tensor: float16 is widened (exactly: every half is a float).
Tensor from_data(const NpyHeader& h, const char* data) {
  Tensor t = Tensor::empty(h.shape, h.dtype);
  if (!h.half) {
    std::memcpy(t.storage()->bytes.get(), data, static_cast<size_t>(h.data_bytes));
    return t;
  }
  float* out = t.f32();
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, data + 2 * i, 2);  // little-endian, as '<f2' says (every target here is)
    out[i] = half_bits_to_float(bits);
  }
  return t;
}

void check_bools(const Tensor& t, const std::string& what) {
  if (t.dtype() != DType::Bool) return;
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.b8()[i] > 1) throw Error(what + ": bool array holds a byte that is neither 0 nor 1");
}

// A .npy file opened for reading: its header, then its data by offset (engine/read_file.h).
class InputFile : public RegularFile {
 public:
  explicit InputFile(const std::string& path)
      : RegularFile(path, "a .npy input must be a file, not a folder, FIFO or device") {}
  // The preamble and header: never more than kMaxHeaderBytes + 12 bytes.
  std::string header_bytes() const {
    const int64_t n = std::min<int64_t>(size(), 12);
    std::string prefix(static_cast<size_t>(n), '\0');
    read_at(0, prefix.data(), n);
    size_t header_len = 0;
    const size_t start = npy_preamble(prefix, path(), &header_len);
    const int64_t total = std::min<int64_t>(size(), static_cast<int64_t>(start + header_len));
    prefix.resize(static_cast<size_t>(total));
    if (total > n) read_at(n, prefix.data() + n, total - n);
    return prefix;
  }
};

}  // namespace

Tensor parse_npy(const std::string& bytes, const std::string& what) {
  const NpyHeader h = parse_npy_header(bytes, what);
  check_data_size(h, static_cast<int64_t>(bytes.size() - h.data_start), what);
  Tensor t = from_data(h, bytes.data() + h.data_start);
  check_bools(t, what);
  return t;
}

NpyInfo read_npy_info(const std::string& path) {
  const InputFile f(path);
  const NpyHeader h = parse_npy_header(f.header_bytes(), path);
  check_data_size(h, f.size() - static_cast<int64_t>(h.data_start), path);
  return {h.dtype, h.shape};
}

Tensor read_npy(const std::string& path) {
  const InputFile f(path);
  const NpyHeader h = parse_npy_header(f.header_bytes(), path);
  // The header's own claim caps the read: the file must hold exactly that many data bytes.
  check_data_size(h, f.size() - static_cast<int64_t>(h.data_start), path);
  if (!h.half) {
    Tensor t = Tensor::empty(h.shape, h.dtype);
    f.read_at(static_cast<int64_t>(h.data_start), t.storage()->bytes.get(), h.data_bytes);
    check_bools(t, path);
    return t;
  }
  std::string halves(static_cast<size_t>(h.data_bytes), '\0');  // the file's bytes, then widened
  f.read_at(static_cast<int64_t>(h.data_start), halves.data(), h.data_bytes);
  Tensor t = from_data(h, halves.data());
  return t;
}

std::string encode_npy(const Tensor& t) {
  const std::string shape = format_dims(t.shape());  // a Python tuple: "(5,)", "(2, 3)"
  std::string header = std::string("{'descr': '") + (t.dtype() == DType::F32 ? "<f4" : "|b1") +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  const Tensor c = t.contiguous();
  out.append(reinterpret_cast<const char*>(c.storage()->bytes.get()) + c.offset() * itemsize(c.dtype()),
             static_cast<size_t>(c.nbytes()));
  return out;
}

void write_npy(const std::string& path, const Tensor& t) { write_file_atomically(path, encode_npy(t)); }

}  // namespace attnsim
