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
//
// The end record counts entries in 16 bits: 70,000 entries would read as 4,464. So the
// entries read must fill the central directory exactly (its size is 32 bits), and an archive
// with a ZIP64 end record is refused by name.
//
// A zip may hold a zip (a zipped folder of one zipped folder): whoever opens the inner one
// passes an UnpackBudget along, so the nesting depth and the bytes over all levels are
// bounded together (6,500 nested zips in 796 KB would otherwise unpack 2.6 GB).
#pragma once

#include <cstdint>
#include <string>

namespace attnsim {

inline constexpr int64_t kMaxZipEntries = 10000;

// Extracts the archive at `zip_path` into the folder `dest`, which must not exist yet; on any
// error `dest` is removed again (nothing half-written is left) and Error names the archive,
// the entry and the reason. Returns the number of files written; *unpacked (when given)
// receives the bytes written.
int64_t extract_zip(const std::string& zip_path, const std::string& dest, int64_t max_bytes,
                    int64_t* unpacked = nullptr);

// What is left to unpack while opening zips inside zips.
struct UnpackBudget {
  int depth_left;     // zips that may still be opened, this one included
  int64_t bytes_left; // over every level
  // Extracts like extract_zip under what is left, and charges it; Error when the nesting or
  // the bytes run out ("... zips nested deeper than N", "... over every level").
  int64_t extract(const std::string& zip_path, const std::string& dest);
};

}  // namespace attnsim
