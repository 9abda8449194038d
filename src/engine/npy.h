// NumPy .npy files: float32 and bool, little-endian, C order (format versions 1.0 to 3.0).
// float16 ('<f2') is read too and widened to float32 on load (the page ships a checkpoint in
// halves to stay small); writes are float32 or bool.
// Anything else (another dtype, Fortran order, a truncated or corrupt header) is an Error
// naming the file and the problem. Writes go to a temporary file renamed into place.
#pragma once

#include <string>

#include "tensor.h"

namespace attnsim {

// Only regular files are read (no FIFOs, devices, folders); the header's own claim
// (shape × itemsize, checked) must match the file's size before any data is read.
Tensor read_npy(const std::string& path);
// The header alone (dtype, shape; '<f2' reads as F32, what loading gives), checked against the file's size: lets a caller predict
// memory before reading the data.
struct NpyInfo {
  DType dtype;
  Dims shape;
};
NpyInfo read_npy_info(const std::string& path);
void write_npy(const std::string& path, const Tensor& tensor);  // logical contents, C order

// Parses an in-memory .npy image (used by read_npy and by tests on corrupt headers).
Tensor parse_npy(const std::string& bytes, const std::string& what);
std::string encode_npy(const Tensor& tensor);

}  // namespace attnsim
