// Unpacking a user's .zip. See zip_extract.h; the layout is PKWARE's APPNOTE.TXT, sections
// 4.3.7 (local header), 4.3.12 (central directory header) and 4.3.16 (end of central
// directory).
#include "zip_extract.h"

#include <array>
#include <climits>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>
#include <vector>

#include "atomic_file.h"
#include "checked.h"
#include "cost.h"
#include "error.h"
#include "read_file.h"

// Only stb_image's zlib inflate is wanted: no image formats, no stdio, every function private
// to this file (Debian's libstb carries its own copy of the symbols).
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#define STBI_NO_STDIO
#define STBI_SUPPORT_ZLIB
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

namespace attnsim {

namespace fs = std::filesystem;

namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;  // 20 bytes, just before the end record
constexpr size_t kZip64LocatorSize = 20;
constexpr size_t kLocalSize = 30, kCentralSize = 46, kEndSize = 22;

uint32_t crc32(const uint8_t* p, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// Little-endian fields of the archive, every read bounds-checked.
class Bytes {
 public:
  Bytes(std::string_view data, const std::string& zip) : d_(data), zip_(zip) {}
  size_t size() const { return d_.size(); }
  uint16_t u16(size_t at) const {
    need(at, 2);
    return static_cast<uint16_t>(b(at) | b(at + 1) << 8);
  }
  uint32_t u32(size_t at) const {
    need(at, 4);
    return static_cast<uint32_t>(b(at)) | static_cast<uint32_t>(b(at + 1)) << 8 |
           static_cast<uint32_t>(b(at + 2)) << 16 | static_cast<uint32_t>(b(at + 3)) << 24;
  }
  std::string_view slice(size_t at, size_t n) const {
    need(at, n);
    return d_.substr(at, n);
  }
  void need(size_t at, size_t n) const {
    if (at > d_.size() || n > d_.size() - at)
      throw Error(zip_ + ": not a zip archive, or a damaged one (a record points past the end of the file)");
  }

 private:
  uint32_t b(size_t at) const { return static_cast<uint8_t>(d_[at]); }
  std::string_view d_;
  const std::string& zip_;
};

struct Entry {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0, packed = 0, size = 0, local = 0, mode = 0;
  bool dir() const { return !name.empty() && name.back() == '/'; }
};

// The end record is the last 22 bytes unless the archive has a comment (at most 65535 bytes).
size_t find_end(const Bytes& z, const std::string& zip) {
  if (z.size() >= kEndSize) {
    const size_t last = z.size() - kEndSize;
    const size_t first = last > 0xFFFF ? last - 0xFFFF : 0;
    for (size_t at = last + 1; at-- > first;)
      if (z.u32(at) == kEndSig) return at;
  }
  throw Error(zip + ": not a zip archive (no end-of-central-directory record)");
}

// A name the archive may create: relative, "/"-separated, no "..", no drive or backslash.
// macOS's "__MACOSX/" resource forks are not the user's files: skipped (false).
bool safe_name(const std::string& name, const std::string& zip) {
  const auto refuse = [&](const char* why) {
    throw Error(zip + ": entry \"" + one_line(name) + "\" " + why + "; nothing was extracted");
  };
  if (name.empty()) refuse("has no name");
  if (name.front() == '/' || name.find('\\') != std::string::npos || name.find(':') != std::string::npos ||
      name.find('\0') != std::string::npos)
    refuse("is an absolute or non-portable path");
  size_t start = 0;
  while (start < name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    const std::string_view part(name.data() + start, end - start);
    if (part == "..") refuse("would be written outside the folder (\"..\")");
    if (part.empty() || part == ".") refuse("has an empty or \".\" path component");
    start = end + 1;
  }
  return name.rfind("__MACOSX/", 0) != 0;
}

std::vector<Entry> read_directory(const Bytes& z, const std::string& zip, int64_t max_bytes) {
  const size_t end = find_end(z, zip);
  const uint16_t disk = z.u16(end + 4), cd_disk = z.u16(end + 6);
  const uint16_t here = z.u16(end + 8), count = z.u16(end + 10);
  const uint32_t cd_size = z.u32(end + 12), cd_at = z.u32(end + 16);
  const bool zip64_locator = end >= kZip64LocatorSize && z.u32(end - kZip64LocatorSize) == kZip64LocatorSig;
  if (count == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_at == 0xFFFFFFFFu || zip64_locator)
    throw Error(zip + ": a ZIP64 archive (over 4 GiB or 65535 entries); attnsim opens plain zip archives");
  if (disk != 0 || cd_disk != 0 || here != count) throw Error(zip + ": a multi-part (spanned) archive");
  if (count > kMaxZipEntries)
    throw Error(zip + ": " + std::to_string(count) + " entries, more than the " + std::to_string(kMaxZipEntries) +
                " a model or lesson folder has");
  if (static_cast<uint64_t>(cd_at) + cd_size > end)
    throw Error(zip + ": the central directory lies outside the archive");

  std::vector<Entry> entries;
  std::set<std::string> names;
  int64_t total = 0;
  size_t at = cd_at;
  for (uint16_t i = 0; i < count; ++i) {
    if (z.u32(at) != kCentralSig) throw Error(zip + ": damaged central directory (entry " + std::to_string(i) + ")");
    Entry e;
    e.flags = z.u16(at + 8);
    e.method = z.u16(at + 10);
    e.crc = z.u32(at + 16);
    e.packed = z.u32(at + 20);
    e.size = z.u32(at + 24);
    const uint16_t name_len = z.u16(at + 28), extra_len = z.u16(at + 30), comment_len = z.u16(at + 32);
    e.mode = z.u32(at + 38) >> 16;  // Unix st_mode when the archive was made on Unix, else 0
    e.local = z.u32(at + 42);
    e.name = std::string(z.slice(at + kCentralSize, name_len));
    at += kCentralSize + name_len + extra_len + comment_len;
    if (!safe_name(e.name, zip)) continue;
    const auto refuse = [&](const std::string& why) {
      throw Error(zip + ": entry \"" + one_line(e.name) + "\" " + why + "; nothing was extracted");
    };
    if (e.flags & 1) refuse("is encrypted");
    if ((e.mode & 0170000) == 0120000) refuse("is a symbolic link");
    if (!e.dir() && e.method != 0 && e.method != 8)
      refuse("uses compression method " + std::to_string(e.method) + " (attnsim reads stored and deflate)");
    if (e.size >= static_cast<uint32_t>(INT_MAX)) refuse("is over 2 GiB");
    if (e.method == 0 && e.packed != e.size) refuse("is stored but its two sizes differ");
    if (!names.insert(e.dir() ? e.name.substr(0, e.name.size() - 1) : e.name).second) refuse("appears twice");
    total = checked_add(total, e.size, "the archive's unpacked size");
    if (total > max_bytes)
      throw Error(zip + ": unpacks to more than " + human_bytes(max_bytes) + " (its entries claim " +
                  human_bytes(total) + " so far); nothing was extracted");
    entries.push_back(std::move(e));
  }
  if (at > end) throw Error(zip + ": the central directory runs past its end record");
  if (at != static_cast<size_t>(cd_at) + cd_size)
    throw Error(zip + ": the end record counts " + std::to_string(count) + " entries but the central directory (" +
                std::to_string(cd_size) + " bytes) holds " + (at < static_cast<size_t>(cd_at) + cd_size ? "more" : "fewer") +
                " (over 65,535 entries needs ZIP64, which attnsim does not open); nothing was extracted");
  return entries;
}

// One entry's bytes, inflated and checked against its CRC-32.
std::string unpack(const Bytes& z, const Entry& e, const std::string& zip) {
  if (z.u32(e.local) != kLocalSig) throw Error(zip + ": entry \"" + one_line(e.name) + "\" has no local header where the directory says");
  const size_t data = e.local + kLocalSize + z.u16(e.local + 26) + z.u16(e.local + 28);
  const std::string_view packed = z.slice(data, e.packed);
  std::string out;
  if (e.method == 0) {
    out = std::string(packed);
  } else {
    // stb's inflate wants slack on both sides: it refills its bit buffer a few bytes ahead
    // (reading past the input's end is an error to it, so zero bytes follow the stream; the
    // final block's end code stops it before them) and asks for room before it reads that end
    // code (one spare output byte). The size and CRC checks catch a stream that lies.
    std::string in(packed);
    in.append(8, '\0');
    out.resize(static_cast<size_t>(e.size) + 1);
    const int n = stbi_zlib_decode_noheader_buffer(out.data(), static_cast<int>(out.size()), in.data(),
                                                   static_cast<int>(in.size()));
    if (n != static_cast<int>(e.size))
      throw Error(zip + ": entry \"" + one_line(e.name) + "\" does not inflate to the size its header claims");
    out.resize(e.size);
  }
  if (crc32(reinterpret_cast<const uint8_t*>(out.data()), out.size()) != e.crc)
    throw Error(zip + ": entry \"" + one_line(e.name) + "\" fails its CRC-32 check (a damaged archive)");
  return out;
}

}  // namespace

int64_t extract_zip(const std::string& zip_path, const std::string& dest, int64_t max_bytes, int64_t* unpacked) {
  std::error_code ec;
  if (fs::exists(dest, ec)) throw Error(dest + ": already exists; a zip is unpacked into a new folder");
  // The archive itself is at most what it may unpack to, plus its headers.
  const std::string bytes = read_text_file(zip_path, checked_add(max_bytes, 64 << 20));
  const Bytes z(bytes, zip_path);
  const std::vector<Entry> entries = read_directory(z, zip_path, max_bytes);
  int64_t files = 0, bytes_written = 0;
  write_folder_atomically(dest, [&](const std::string& tmp) {
    for (const Entry& e : entries) {
      const fs::path target = fs::path(tmp) / e.name;
      std::error_code made;
      fs::create_directories(e.dir() ? target : target.parent_path(), made);
      if (made) throw Error(zip_path + ": entry \"" + one_line(e.name) + "\": cannot create its folder (" + made.message() + ")");
      if (e.dir()) continue;
      write_file_atomically(target.string(), unpack(z, e, zip_path));
      ++files;
      bytes_written += e.size;
    }
  });
  if (unpacked) *unpacked = bytes_written;
  return files;
}

int64_t UnpackBudget::extract(const std::string& zip_path, const std::string& dest) {
  if (depth_left <= 0)
    throw Error(zip_path + ": zips nested deeper than attnsim opens (a zip inside a zip inside ...); nothing was extracted");
  if (bytes_left <= 0) throw Error(zip_path + ": the zips opened so far already unpacked all that may be unpacked");
  int64_t bytes = 0;
  const int64_t files = extract_zip(zip_path, dest, bytes_left, &bytes);
  --depth_left;
  bytes_left -= bytes;
  return files;
}

}  // namespace attnsim
