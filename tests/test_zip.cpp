// Zipped folders in: a real archive unpacks to the bytes zipfile put in; every lie an archive
// can tell is one Error, and nothing is left behind.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "engine/error.h"
#include "engine/mha.h"
#include "engine/npy.h"
#include "engine/zip_extract.h"

using namespace attnsim;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/zip/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("attnsim-zip-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

// A copy of weights.zip with `patch` applied, written next to the scratch folder.
std::string patched(const std::string& name, const std::function<void(std::string&)>& patch) {
  std::string z = slurp(kFixtures + "weights.zip");
  patch(z);
  const std::string path = scratch(name).string() + ".zip";
  std::ofstream(path, std::ios::binary) << z;
  return path;
}

size_t find_sig(const std::string& z, uint32_t sig, size_t from = 0) {
  const char s[4] = {char(sig), char(sig >> 8), char(sig >> 16), char(sig >> 24)};
  return z.find(std::string(s, 4), from);
}

// The central directory record of the archive's second entry (the first is the folder).
size_t second_entry(const std::string& z) { return find_sig(z, 0x02014b50, find_sig(z, 0x02014b50) + 4); }

void put32(std::string& z, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) z[at + i] = char(v >> (8 * i));
}

// extract_zip must throw with `needle` in the message, and leave `dest` absent.
void refuses(const std::string& zip, const std::string& needle, int64_t max_bytes = 1 << 20) {
  const fs::path dest = scratch("dest");
  try {
    extract_zip(zip, dest.string(), max_bytes);
    FAIL("extracted " << zip);
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains(needle));
  }
  CHECK_FALSE(fs::exists(dest));
}

}  // namespace

TEST_CASE("a zipped weights folder unpacks byte for byte and loads as the engine's weights") {
  const fs::path dest = scratch("weights");
  CHECK(extract_zip(kFixtures + "weights.zip", dest.string(), 1 << 20) == 8);  // __MACOSX/ skipped
  CHECK_FALSE(fs::exists(dest / "__MACOSX"));
  const MhaWeights w = load_weights((dest / "weights-d8").string(), 8, true);
  CHECK(w.W_O.bias.shape() == Dims{8});
  // The first value numpy wrote (rng seed 8, scaled by 0.3) survives inflate exactly.
  const Tensor q = read_npy((dest / "weights-d8" / "W_Q.weight.npy").string());
  CHECK(q.shape() == Dims{8, 8});
  CHECK(std::fabs(q.to_vector()[0]) < 2.0f);
  CHECK(fs::file_size(dest / "weights-d8" / "W_Q.weight.npy") == 128 + 8 * 8 * 4);
  fs::remove_all(dest);
}

TEST_CASE("a zip that lies is refused before anything is written") {
  refuses(kFixtures + "slip.zip", "outside the folder");
  refuses(kFixtures + "link.zip", "symbolic link");
  refuses(kFixtures + "weights.zip", "unpacks to more than", 1000);  // by the sizes it claims
  refuses(patched("notzip", [](std::string& z) { z = "PK not really"; }), "not a zip archive");
  refuses(patched("truncated", [](std::string& z) { z.resize(z.size() / 2); }), "end-of-central-directory");
  refuses(patched("crc", [](std::string& z) { put32(z, second_entry(z) + 16, 0xDEADBEEF); }), "CRC-32");
  refuses(patched("encrypted", [](std::string& z) { z[find_sig(z, 0x02014b50) + 8] |= 1; }), "encrypted");
  refuses(patched("method", [](std::string& z) { z[second_entry(z) + 10] = 14; }),
          "compression method 14");
  refuses(patched("bomb", [](std::string& z) {  // one 384-byte entry claims 1 GiB
    put32(z, second_entry(z) + 24, 0x40000000);
  }), "unpacks to more than");
  refuses(patched("local", [](std::string& z) { put32(z, second_entry(z) + 42, 0x00FFFFFF); }),
          "past the end");
  refuses(patched("zip64", [](std::string& z) { put32(z, find_sig(z, 0x06054b50) + 16, 0xFFFFFFFF); }), "ZIP64");
  refuses(patched("directory", [](std::string& z) { put32(z, find_sig(z, 0x06054b50) + 16, 0x7FFFFFF0); }),
          "outside the archive");
}

TEST_CASE("a zip is unpacked only into a new folder") {
  const fs::path dest = scratch("exists");
  fs::create_directories(dest);
  CHECK_THROWS_WITH(extract_zip(kFixtures + "weights.zip", dest.string(), 1 << 20), Catch::Contains("already exists"));
  CHECK(fs::is_empty(dest));
  fs::remove_all(dest);
}

// [SECTION] issue 37: counts that wrap, names with NUL, zips inside zips

namespace {

uint32_t crc_of(const std::string& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (const unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

void put16(std::string& z, uint16_t v) { z += char(v), z += char(v >> 8); }
void put32(std::string& z, uint32_t v) { put16(z, uint16_t(v)), put16(z, uint16_t(v >> 16)); }

// A stored (uncompressed) zip of `files` (name -> bytes), as APPNOTE lays it out; the end
// record's 16-bit entry count is what it is, wrapped or not.
std::string stored_zip(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string z, dir;
  for (const auto& [name, data] : files) {
    const uint32_t at = uint32_t(z.size()), crc = crc_of(data), n = uint32_t(data.size());
    put32(z, 0x04034b50), put16(z, 20), put16(z, 0), put16(z, 0), put32(z, 0), put32(z, crc), put32(z, n), put32(z, n);
    put16(z, uint16_t(name.size())), put16(z, 0);
    z += name + data;
    put32(dir, 0x02014b50), put16(dir, 20), put16(dir, 20), put16(dir, 0), put16(dir, 0), put32(dir, 0);
    put32(dir, crc), put32(dir, n), put32(dir, n), put16(dir, uint16_t(name.size())), put16(dir, 0), put16(dir, 0);
    put16(dir, 0), put16(dir, 0), put32(dir, 0), put32(dir, at);
    dir += name;
  }
  const uint32_t dir_at = uint32_t(z.size());
  z += dir;
  put32(z, 0x06054b50), put16(z, 0), put16(z, 0), put16(z, uint16_t(files.size())), put16(z, uint16_t(files.size()));
  put32(z, uint32_t(dir.size())), put32(z, dir_at), put16(z, 0);
  return z;
}

std::string write_zip(const std::string& name, const std::string& bytes) {
  const std::string path = scratch(name).string() + ".zip";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace

TEST_CASE("a zip of 70,000 entries is refused, not cut to the 4,464 its 16-bit count wraps to") {
  std::vector<std::pair<std::string, std::string>> files;
  for (int i = 0; i < 70000; ++i) files.push_back({"f" + std::to_string(i), "x"});
  refuses(write_zip("many", stored_zip(files)), "counts 4464 entries but the central directory");
  // the same layout with a count that is right unpacks
  const fs::path dest = scratch("few");
  CHECK(extract_zip(write_zip("few", stored_zip({{"a.txt", "hello"}, {"b.txt", ""}})), dest.string(), 1 << 20) == 2);
  CHECK(slurp((dest / "a.txt").string()) == "hello");
  fs::remove_all(dest);
}

TEST_CASE("an entry name with a NUL byte is named whole in the message") {
  refuses(write_zip("nul", stored_zip({{std::string("ab\0cd.npy", 9), "x"}})), "ab\\x00cd.npy\" is an absolute");
}

TEST_CASE("zips inside zips: the depth and the bytes over every level are bounded together") {
  const std::string inner = stored_zip({{"w.txt", std::string(1000, 'w')}});
  const std::string middle = stored_zip({{"inner.zip", inner}});
  const std::string outer = write_zip("outer", stored_zip({{"middle.zip", middle}}));
  const fs::path a = scratch("lv1"), b = scratch("lv2"), c = scratch("lv3");
  UnpackBudget two{2, 1 << 20};
  CHECK(two.extract(outer, a.string()) == 1);
  CHECK(two.extract((a / "middle.zip").string(), b.string()) == 1);
  CHECK(two.bytes_left == (1 << 20) - int64_t(middle.size()) - int64_t(inner.size()));
  CHECK_THROWS_WITH(two.extract((b / "inner.zip").string(), c.string()), Catch::Contains("nested deeper"));
  CHECK_FALSE(fs::exists(c));
  // the bytes: what the first level unpacked is not there for the second
  fs::remove_all(a), fs::remove_all(b);
  UnpackBudget small{5, int64_t(middle.size()) + 10};
  small.extract(outer, a.string());
  CHECK_THROWS_WITH(small.extract((a / "middle.zip").string(), b.string()), Catch::Contains("unpacks to more than"));
  CHECK_FALSE(fs::exists(b));
  fs::remove_all(a);
}
