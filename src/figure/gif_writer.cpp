// Animated GIF writer. See gif_writer.h.
#include "figure/gif_writer.h"

#include <gif_lib.h>

#include <algorithm>
#include <unordered_map>

#include "engine/atomic_file.h"
#include "engine/error.h"

namespace attnsim::figure {

namespace {

// The palette: GifQuantizeBuffer (median cut) over every k-th pixel of every frame.
bool build_palette(const std::vector<GifFrame>& frames, size_t pixels, ColorMapObject** map) {
  const size_t budget = 1 << 20;  // sampled pixels in all
  const size_t stride = std::max<size_t>(1, pixels * frames.size() / budget);
  std::vector<GifByteType> r, g, b;
  for (const GifFrame& f : frames)
    for (size_t i = 0; i < pixels; i += stride) {
      r.push_back(f.rgba[i * 4]);
      g.push_back(f.rgba[i * 4 + 1]);
      b.push_back(f.rgba[i * 4 + 2]);
    }
  int size = 256;
  *map = GifMakeMapObject(size, nullptr);
  if (!*map) return false;
  std::vector<GifByteType> out(r.size());
  if (GifQuantizeBuffer(static_cast<unsigned>(r.size()), 1, &size, r.data(), g.data(), b.data(), out.data(),
                        (*map)->Colors) == GIF_ERROR)
    return false;
  return true;
}

GifByteType nearest(const ColorMapObject* map, uint32_t rgb, std::unordered_map<uint32_t, GifByteType>& cache) {
  auto it = cache.find(rgb);
  if (it != cache.end()) return it->second;
  const int r = static_cast<int>(rgb >> 16), g = static_cast<int>((rgb >> 8) & 255), b = static_cast<int>(rgb & 255);
  int best = 0, best_d = 1 << 30;
  for (int i = 0; i < map->ColorCount; ++i) {
    const GifColorType& c = map->Colors[i];
    const int d = (c.Red - r) * (c.Red - r) + (c.Green - g) * (c.Green - g) + (c.Blue - b) * (c.Blue - b);
    if (d < best_d) best_d = d, best = i;
  }
  cache.emplace(rgb, static_cast<GifByteType>(best));
  return static_cast<GifByteType>(best);
}

// giflib's output callback: appends to the std::string in the file's UserData.
int append_bytes(GifFileType* gif, const GifByteType* data, int length) {
  static_cast<std::string*>(gif->UserData)->append(reinterpret_cast<const char*>(data), static_cast<size_t>(length));
  return length;
}

}  // namespace

bool write_gif(const std::string& path, int width, int height, const std::vector<GifFrame>& frames,
               std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = path + ": " + why;
    return false;
  };
  const size_t pixels = static_cast<size_t>(width) * static_cast<size_t>(height);
  if (frames.empty()) return fail("no frames to write");
  for (const GifFrame& f : frames)
    if (f.rgba.size() != pixels * 4) return fail("a frame has the wrong size");
  ColorMapObject* map = nullptr;
  if (!build_palette(frames, pixels, &map)) {
    if (map) GifFreeMapObject(map);
    return fail("cannot build the GIF palette");
  }
  int err = 0;
  std::string bytes;  // encoded in memory, then written whole (engine/atomic_file.h)
  GifFileType* gif = EGifOpen(&bytes, append_bytes, &err);
  if (!gif) {
    GifFreeMapObject(map);
    return fail(std::string("cannot encode GIF: ") + GifErrorString(err));
  }
  EGifSetGifVersion(gif, true);
  bool ok = EGifPutScreenDesc(gif, width, height, 8, 0, map) != GIF_ERROR;
  // Loop forever (the NETSCAPE2.0 application extension).
  static const GifByteType kNetscape[] = {'N', 'E', 'T', 'S', 'C', 'A', 'P', 'E', '2', '.', '0'};
  static const GifByteType kLoop[] = {1, 0, 0};
  ok = ok && EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) != GIF_ERROR &&
       EGifPutExtensionBlock(gif, sizeof kNetscape, kNetscape) != GIF_ERROR &&
       EGifPutExtensionBlock(gif, sizeof kLoop, kLoop) != GIF_ERROR && EGifPutExtensionTrailer(gif) != GIF_ERROR;
  std::unordered_map<uint32_t, GifByteType> cache;
  std::vector<GifByteType> line(static_cast<size_t>(width));
  for (const GifFrame& f : frames) {
    if (!ok) break;
    GraphicsControlBlock gcb{};
    gcb.DisposalMode = DISPOSE_DO_NOT;
    gcb.DelayTime = f.delay_cs;
    gcb.TransparentColor = NO_TRANSPARENT_COLOR;
    GifByteType ext[4];
    EGifGCBToExtension(&gcb, ext);
    ok = EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, ext) != GIF_ERROR &&
         EGifPutImageDesc(gif, 0, 0, width, height, false, nullptr) != GIF_ERROR;
    for (int y = 0; ok && y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const uint8_t* p = &f.rgba[(static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 4];
        line[static_cast<size_t>(x)] = nearest(map, (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2], cache);
      }
      ok = EGifPutLine(gif, line.data(), width) != GIF_ERROR;
    }
  }
  std::string why;
  if (!ok) why = std::string("cannot encode GIF: ") + GifErrorString(gif->Error);
  GifFreeMapObject(map);
  if (EGifCloseFile(gif, &err) == GIF_ERROR && ok) {
    why = std::string("cannot finish GIF: ") + GifErrorString(err);
    ok = false;
  }
  if (!ok) return fail(why);
  return write_file_atomically(path, bytes, error);
}

}  // namespace attnsim::figure
