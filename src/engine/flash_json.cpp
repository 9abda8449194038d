// Streams the tile trace as JSON (format in flash_json.h).
#include "flash_json.h"

#include <cmath>
#include <cstdio>

namespace attnsim {

namespace {

void number(std::ostream& out, double v) {
  if (std::isnan(v)) {
    out << "\"nan\"";
  } else if (std::isinf(v)) {
    out << (v < 0 ? "\"-inf\"" : "\"inf\"");
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    out << buf;
  }
}

// A (n) tensor as [..] or a (rows, cols) tensor as [[..], ..].
void tensor(std::ostream& out, const char* key, const Tensor& t) {
  out << ",\"" << key << "\":";
  const std::vector<float> v = t.to_vector();
  if (t.dim() == 1) {
    out << '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out << ',';
      number(out, v[i]);
    }
    out << ']';
    return;
  }
  const int64_t rows = t.size(0), cols = t.size(1);
  out << '[';
  for (int64_t r = 0; r < rows; ++r) {
    out << (r ? ",[" : "[");
    for (int64_t c = 0; c < cols; ++c) {
      if (c) out << ',';
      number(out, v[static_cast<size_t>(r * cols + c)]);
    }
    out << ']';
  }
  out << ']';
}

void io(std::ostream& out, const char* key, const FlashIo& x) {
  out << ",\"" << key << "\":{\"reads\":" << x.reads << ",\"writes\":" << x.writes << '}';
}

}  // namespace

void write_flash_tiles_json(std::ostream& out, const FlashCoreResult& r, double scale) {
  const FlashStats& st = r.stats;
  const FlashShape& s = st.shape;
  out << "{\"shape\":{\"batch\":" << s.batch << ",\"heads\":" << s.heads << ",\"tq\":" << s.tq
      << ",\"tk\":" << s.tk << ",\"head_dim\":" << s.head_dim << ",\"block_q\":" << s.block_q
      << ",\"block_k\":" << s.block_k << ",\"q_blocks\":" << s.q_blocks() << ",\"k_blocks\":" << s.k_blocks()
      << "},\"scale\":";
  number(out, scale);
  out << ",\"threads\":" << st.threads << ",\"tiles_total\":" << st.tiles_total
      << ",\"tiles_visited\":" << st.tiles_visited << ",\"tiles_skipped\":" << st.tiles_skipped;
  io(out, "io_tiled", st.io);
  io(out, "io_standard", st.io_standard);
  out << ",\"fast_bytes\":" << st.fast_bytes << ",\"core_bytes\":" << st.core_bytes
      << ",\"standard_core_bytes\":" << st.standard_core_bytes << ",\"events\":[";
  bool first = true;
  for (const FlashEvent& e : r.events) {
    out << (first ? "\n" : ",\n");
    first = false;
    out << "{\"kind\":\"" << flash_event_kind_name(e.kind) << "\",\"b\":" << e.b << ",\"h\":" << e.h
        << ",\"q_block\":" << e.q_block << ",\"k_block\":" << e.k_block << ",\"q0\":" << e.q0
        << ",\"rows\":" << e.rows << ",\"k0\":" << e.k0 << ",\"cols\":" << e.cols;
    if (e.kind == FlashEventKind::Tile) {
      tensor(out, "scores", e.scores);
      tensor(out, "m_before", e.m_before);
      tensor(out, "m_after", e.m_after);
      tensor(out, "rescale", e.rescale);
      tensor(out, "l_before", e.l_before);
      tensor(out, "l_after", e.l_after);
      tensor(out, "probs", e.probs);
      tensor(out, "acc", e.acc);
    } else if (e.kind == FlashEventKind::Final) {
      tensor(out, "m", e.m);
      tensor(out, "l", e.l);
      tensor(out, "out", e.out);
    }
    out << ",\"fast_bytes\":" << e.fast_bytes << ",\"held_bytes\":" << e.held_bytes;
    io(out, "io", e.io);
    io(out, "io_standard", e.io_standard);
    out << '}';
  }
  out << "\n]}\n";
}

}  // namespace attnsim
