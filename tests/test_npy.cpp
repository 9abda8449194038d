// .npy in and out: round trips, and a clear error for everything we do not read.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

#include "engine/error.h"
#include "engine/npy.h"
#include "helpers.h"

using namespace attnsim;

static std::string header(const std::string& dict) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(h.size() & 0xFF) + static_cast<char>(h.size() >> 8) + h;
}

TEST_CASE("npy round trip keeps float32 values, bool masks and the logical order of views") {
  const Tensor x = Tensor::from_values({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor back = parse_npy(encode_npy(x.transpose(0, 1)), "mem");
  CHECK(back.shape() == Dims{3, 2});
  CHECK(back.to_vector() == std::vector<float>{1, 4, 2, 5, 3, 6});
  Tensor m = Tensor::zeros({4}, DType::Bool);
  m.b8()[2] = 1;
  const Tensor mb = parse_npy(encode_npy(m), "mem");
  CHECK(mb.dtype() == DType::Bool);
  CHECK(mb.to_vector() == std::vector<float>{0, 0, 1, 0});
  CHECK(encode_npy(m).substr(10, 60).find("'shape': (4,)") != std::string::npos);
}

TEST_CASE("numpy's own files load (committed PyTorch fixtures)") {
  const Tensor m = read_npy(std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/causal_keypad/mask.npy");
  CHECK(m.dtype() == DType::Bool);
  CHECK(m.shape() == Dims{2, 1, 6, 6});
}

TEST_CASE("unsupported or corrupt .npy files are clear errors") {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string data(8, '\0');
  CHECK(parse_npy(header(f4) + data, "x.npy").shape() == Dims{2});
  CHECK_THROWS_WITH(parse_npy(header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }") + data + data, "x.npy"),
                    Catch::Contains("x.npy: dtype '<f8' is not supported"));
  CHECK_THROWS_WITH(parse_npy(header("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }") + data, "x.npy"),
                    Catch::Contains("dtype '>f4' is not supported"));
  CHECK_THROWS_WITH(parse_npy(header("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }") + data, "x.npy"),
                    Catch::Contains("Fortran-order arrays are not supported"));
  CHECK_THROWS_WITH(parse_npy(header(f4) + data.substr(0, 5), "x.npy"), Catch::Contains("(truncated)"));
  CHECK_THROWS_WITH(parse_npy(header(f4).substr(0, 30), "x.npy"), Catch::Contains("truncated .npy header"));
  CHECK_THROWS_WITH(parse_npy("PK\x03\x04 not numpy at all", "x.npy"), Catch::Contains("not a .npy file"));
  CHECK_THROWS_WITH(parse_npy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }") + data, "x.npy"),
                    Catch::Contains("corrupt .npy shape"));
  CHECK_THROWS_WITH(read_npy("/nonexistent/w.npy"), Catch::Contains("/nonexistent/w.npy: cannot open"));
  // No elements, yet the first stride would pass int64 (found by fuzz_npy in CI).
  CHECK_THROWS_WITH(parse_npy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 100000000000000, 10000000), }"), "x.npy"),
                    Catch::Contains("strides of shape (0, 100000000000000, 10000000)"));
  CHECK(parse_npy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 1000, 10), }"), "x.npy").strides() == Dims{10000, 10, 1});
}

TEST_CASE("write_npy to an unwritable place fails cleanly and leaves nothing behind") {
  const Tensor x = Tensor::zeros({3});
  CHECK_THROWS_WITH(write_npy("/nonexistent-dir/x.npy", x), Catch::Contains("cannot write"));
  const auto dir = std::filesystem::temp_directory_path() / "attnsim-npy-test";
  std::filesystem::create_directories(dir);
  write_npy((dir / "x.npy").string(), x);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.path().filename() == "x.npy" ? 1 : 100;
  CHECK(files == 1);  // no temporary left over
  std::filesystem::remove_all(dir);
}
