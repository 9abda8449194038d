// NumPy .npy files: float32 and bool, little-endian, C order (format versions 1.0 to 3.0).
// Anything else (another dtype, Fortran order, a truncated or corrupt header) is an Error
// naming the file and the problem. Writes go to a temporary file renamed into place.
#pragma once

#include <string>

#include "tensor.h"

namespace attnsim {

Tensor read_npy(const std::string& path);
void write_npy(const std::string& path, const Tensor& tensor);  // logical contents, C order

// Parses an in-memory .npy image (used by read_npy and by tests on corrupt headers).
Tensor parse_npy(const std::string& bytes, const std::string& what);
std::string encode_npy(const Tensor& tensor);

}  // namespace attnsim
