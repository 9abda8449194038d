// Unpacking a .zip the user hands the app (a checkpoint or weights folder, zipped by a file
// manager or `zip -r`), without trusting it.
//
//   [local header + data] ... [central directory] [end of central directory]
//
// The central directory is the archive's table of contents: every entry's name, method,
// sizes, CRC-32 and where its local header starts. Only what that table claims is read, and
// every claim is checked before a byte is written: offsets inside the file, a name that stays
// inside the target folder (no "..", no absolute path: "zip slip"), stored (0) or deflate (8)
// only, no encryption, no ZIP64, no more than kMaxZipEntries entries, and the sum of the
// uncompressed sizes within `max_bytes` (a 1 KB archive that claims 4 GB is refused by its
// claim, before anything is inflated). Inflate is stb_image's zlib decoder; each entry's
// CRC-32 is checked after it.
#pragma once

#include <cstdint>
#include <string>

namespace attnsim {

inline constexpr int64_t kMaxZipEntries = 10000;

// Extracts the archive at `zip_path` into the folder `dest`, which must not exist yet; on any
// error `dest` is removed again (nothing half-written is left) and Error names the archive,
// the entry and the reason. Returns the number of files written.
int64_t extract_zip(const std::string& zip_path, const std::string& dest, int64_t max_bytes);

}  // namespace attnsim
