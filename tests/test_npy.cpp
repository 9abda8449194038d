// .npy in and out: round trips, and a clear error for everything we do not read.
#include <catch2/catch.hpp>
#include <cmath>
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

// float16 files: the page ships the language model's weights in halves. Every half is a float,
// so widening is exact; the bit patterns below are IEEE 754 binary16's own.
static std::string halves(std::initializer_list<uint16_t> bits) {
  std::string out;
  for (uint16_t b : bits) out += std::string{static_cast<char>(b & 0xFF), static_cast<char>(b >> 8)};
  return out;
}

TEST_CASE("float16 .npy files load widened to float32, exactly") {
  const std::string f2 = "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }";
  // 1, -2, 65504 (the largest half), 2^-24 (the smallest subnormal), 0.333251953125 (1/3 in half), -0
  const std::string data = halves({0x3C00, 0xC000, 0x7BFF, 0x0001, 0x3555, 0x8000});
  const Tensor t = parse_npy(header(f2) + data, "h.npy");
  REQUIRE(t.dtype() == DType::F32);
  REQUIRE(t.shape() == Dims{2, 3});
  CHECK(t.to_vector() == std::vector<float>{1.0f, -2.0f, 65504.0f, 0x1p-24f, 0.333251953125f, -0.0f});
  CHECK(std::signbit(t.to_vector()[5]));

  // From a file: the same values, and read_npy_info says what loading gives (float32).
  const std::string path = (std::filesystem::temp_directory_path() / "attnsim-test-half.npy").string();
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const std::string bytes = header(f2) + data;
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  CHECK(read_npy(path).to_vector() == t.to_vector());
  CHECK(read_npy_info(path).dtype == DType::F32);
  CHECK(read_npy_info(path).shape == Dims{2, 3});
  std::filesystem::remove(path);

  // inf and NaN stay what they are (a checkpoint then refuses them by name).
  const Tensor special = parse_npy(header("{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }") + halves({0x7C00, 0x7E00}), "h.npy");
  CHECK(std::isinf(special.to_vector()[0]));
  CHECK(std::isnan(special.to_vector()[1]));
}

TEST_CASE("a float16 .npy whose data does not match its shape is refused before any is read") {
  const std::string f2 = "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }";
  // 3 halves are 6 bytes: 4 is truncated, 12 (three float32s) is not what the header says.
  CHECK_THROWS_WITH(parse_npy(header(f2) + std::string(4, '\0'), "h.npy"),
                    Catch::Contains("h.npy: data is 4 bytes but shape (3,) of float16 needs 6 (truncated)"));
  CHECK_THROWS_WITH(parse_npy(header(f2) + std::string(12, '\0'), "h.npy"),
                    Catch::Contains("data is 12 bytes but shape (3,) of float16 needs 6"));
  CHECK_THROWS_WITH(parse_npy(header("{'descr': '>f2', 'fortran_order': False, 'shape': (3,), }") + std::string(6, '\0'), "h.npy"),
                    Catch::Contains("dtype '>f2' is not supported"));
  CHECK_THROWS_WITH(parse_npy(header("{'descr': '<f2', 'fortran_order': True, 'shape': (3,), }") + std::string(6, '\0'), "h.npy"),
                    Catch::Contains("Fortran-order arrays are not supported"));
  // A claim past int64 is refused by the size arithmetic, not by an allocation.
  CHECK_THROWS_WITH(parse_npy(header("{'descr': '<f2', 'fortran_order': False, 'shape': (4611686018427387904, 4), }"), "h.npy"),
                    Catch::Contains("h.npy"));
}
