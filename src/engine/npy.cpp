#include "npy.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "error.h"

namespace attnsim {

// Layout of a .npy file:
//   "\x93NUMPY" major minor  header_len (u16 for v1, u32 for v2/v3)  header  data
// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline so the data starts on a 64-byte boundary.

namespace {

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

}  // namespace

Tensor parse_npy(const std::string& bytes, const std::string& what) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    throw Error(what + ": not a .npy file (missing the \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(what + ": truncated .npy header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    throw Error(what + ": unsupported .npy format version " + std::to_string(major));
  }
  if (bytes.size() < header_start + header_len) throw Error(what + ": truncated .npy header");
  const std::string header = bytes.substr(header_start, header_len);
  if (header.find('{') == std::string::npos || header.find('}') == std::string::npos)
    throw Error(what + ": corrupt .npy header (no dict)");

  const std::string descr = dict_value(header, "descr", what);
  DType dtype;
  if (descr == "<f4") dtype = DType::F32;
  else if (descr == "|b1" || descr == "<b1" || descr == "b1") dtype = DType::Bool;
  else
    throw Error(what + ": dtype '" + descr + "' is not supported (want float32 '<f4' or bool '|b1'; convert with .astype)");
  const std::string fortran = dict_value(header, "fortran_order", what);
  if (fortran == "True")
    throw Error(what + ": Fortran-order arrays are not supported (save with np.ascontiguousarray)");
  if (fortran != "False") throw Error(what + ": corrupt .npy header: fortran_order is '" + fortran + "'");
  const std::string shape_text = dict_value(header, "shape", what);
  if (shape_text.empty() || shape_text.front() != '(') throw Error(what + ": corrupt .npy header: shape is not a tuple");
  const Dims shape = parse_shape(shape_text, what);

  const size_t data_start = header_start + header_len;
  const int64_t need = numel_of(shape) * itemsize(dtype);
  const int64_t have = static_cast<int64_t>(bytes.size() - data_start);
  if (have != need)
    throw Error(what + ": data is " + std::to_string(have) + " bytes but shape " + format_dims(shape) +
                " of " + dtype_name(dtype) + " needs " + std::to_string(need) + (have < need ? " (truncated)" : ""));
  Tensor t = Tensor::empty(shape, dtype);
  std::memcpy(t.storage()->bytes.get(), bytes.data() + data_start, static_cast<size_t>(need));
  if (dtype == DType::Bool)
    for (int64_t i = 0; i < t.numel(); ++i)
      if (t.b8()[i] > 1) throw Error(what + ": bool array holds a byte that is neither 0 nor 1");
  return t;
}

Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_npy(buf.str(), path);
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

void write_npy(const std::string& path, const Tensor& t) {
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path + ": cannot write (" + std::strerror(errno) + ")");
    const std::string bytes = encode_npy(t);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw Error(path + ": write failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(path + ": cannot rename the finished file into place (" + std::strerror(errno) + ")");
  }
}

}  // namespace attnsim
