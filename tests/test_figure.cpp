// Figures (src/figure): palettes a colour-blind viewer can read, slides whose labels never
// overlap and stay on the page, sinks that write whole files with real text.
#include <catch2/catch.hpp>
#include <gif_lib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "engine/error.h"
#include "engine/flash.h"
#include "engine/tensor.h"
#include "figure/cairo_sink.h"
#include "figure/flash_figure.h"
#include "figure/gif_writer.h"
#include "figure/memory_figure.h"
#include "figure/number_cards.h"
#include "figure/palette.h"
#include "figure/plot.h"
#include "figure/slide.h"
#include "figure/svg_sink.h"
#include "figure/table_figure.h"
#include "figure/tensor_figure.h"
#include "figure/text_metrics.h"

using namespace attnsim;
using namespace attnsim::figure;
namespace fs = std::filesystem;

namespace {

std::string scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "attnsim-figure-test";
  fs::create_directories(dir);
  return (dir / name).string();
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

// A (1, h, T, T) tensor of weights with one NaN row in head 0 (a fully hidden query row).
Tensor weights(int64_t h, int64_t T) {
  Tensor t = Tensor::zeros({1, h, T, T});
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = static_cast<float>(i % 7) / 7.0f;
  for (int64_t j = 0; j < T; ++j) t.f32()[(T - 1) * T + j] = std::numeric_limits<float>::quiet_NaN();
  return t;
}

Figure heads_slide(int64_t h, int64_t T, const std::string& theme = "print", BlocksLayout* layout = nullptr) {
  const Tensor t = weights(h, T);
  auto blocks = tensor_blocks("alpha", t, 0);
  SlideSpec spec;
  spec.title = "alpha: 주의 가중치";
  spec.caption = "softmax turns each row into weights that add up to 1.";
  spec.legend = legend_for(blocks, "alpha");
  Slide s = make_slide(spec, theme_by_name(theme));
  AxisLabels labels;
  for (int64_t i = 0; i < T; ++i) labels.rows.push_back(i == 0 ? "고양이가" : i == T - 1 ? "<pad>" : "tok" + std::to_string(i));
  labels.cols = labels.rows;
  const BlocksLayout l = add_blocks(s.figure, theme_by_name(theme), s.visual, blocks, labels);
  if (layout) *layout = l;
  return s.figure;
}

size_t texts_with_role(const Figure& f, const std::string& role) {
  size_t n = 0;
  for (const Item& i : f.items)
    if (const auto* t = std::get_if<Text>(&i)) n += t->role == role;
  return n;
}

}  // namespace

TEST_CASE("figure: the weight and signed palettes stay distinguishable with deuteranopia and protanopia") {
  // Seven legend stops; CIE76 difference between neighbours as a colour-blind viewer sees them.
  for (ColorMapId map : {ColorMapId::Viridis, ColorMapId::Cividis, ColorMapId::Diverging})
    for (Vision v : {Vision::Normal, Vision::Deuteranopia, Vision::Protanopia}) {
      INFO(colormap_name(map) << " vision " << static_cast<int>(v));
      CHECK(min_adjacent_delta_e(map, 7, v) >= 10.0);
    }
}

TEST_CASE("figure: the colour-blind check rejects a red-green map (the check can fail)") {
  // Red and green of equal lightness collapse under deuteranopia.
  const Color red = rgb(0xd62728), green = rgb(0x2ca02c);
  CHECK(delta_e(red, green) > 40);  // obvious with normal vision
  const double seen = delta_e(simulate(Vision::Deuteranopia, red), simulate(Vision::Deuteranopia, green));
  CHECK(seen < delta_e(red, green) / 2);
  // Simulation keeps gray as gray.
  const Color g = simulate(Vision::Deuteranopia, rgb(0x808080));
  CHECK(std::fabs(g.r - g.g) < 0.02f);
  CHECK(std::fabs(g.g - g.b) < 0.02f);
}

TEST_CASE("figure: slide type is projector size: titles >= 48 and every other text >= 28 at 1080p") {
  for (const char* theme : {"print", "projector"}) {
    const Figure f = heads_slide(4, 6, theme);
    for (const Item& i : f.items)
      if (const auto* t = std::get_if<Text>(&i)) {
        INFO(t->role << ": " << t->text);
        if (t->role == "title") CHECK(t->size >= kTitleMin);
        else if (t->role != "footer") CHECK(t->size >= kLabelMin);
      }
  }
}

TEST_CASE("figure: every row and column label of a 4-head 6x6 view is drawn, none overlaps, all on the page") {
  BlocksLayout layout;
  const Figure f = heads_slide(4, 6, "print", &layout);
  CHECK(layout.row_labels);
  CHECK(layout.col_labels);
  // 6 row labels left of each grid row + 6 column labels over each of 4 blocks + 4 head names.
  CHECK(texts_with_role(f, "label") == 6 * static_cast<size_t>(layout.grid_rows) + 4 * 6 + 4);
  CHECK(overlapping_texts(f).empty());
  CHECK(texts_outside(f).empty());
}

TEST_CASE("figure: labels that cannot fit are summarised in one line instead of drawn every other row") {
  const Figure f = heads_slide(8, 128);
  bool summary = false;
  for (const Item& i : f.items)
    if (const auto* t = std::get_if<Text>(&i))
      summary |= t->role == "note" && t->text.find("128 rows: 고양이가 … <pad>") != std::string::npos;
  CHECK(summary);
  CHECK(texts_with_role(f, "label") == 8);  // only the head names
  CHECK(overlapping_texts(f).empty());
  CHECK(texts_outside(f).empty());
}

TEST_CASE("figure: cells are never taller than wide; without column labels they are square") {
  // 8 heads of 128 x 128: no label fits, so each block is as square as its matrix.
  BlocksLayout big;
  heads_slide(8, 128, "print", &big);
  REQUIRE(big.cells.size() == 8);
  for (const Rect& r : big.cells) CHECK(r.w / 128 == Approx(r.h / 128));
  CHECK(big.grid_rows == 2);  // 2 x 4 squares, not 8 bars side by side
  // 4 heads of 6 x 6 with token labels: cells may widen (up to 3x) to hold the key tokens.
  BlocksLayout small;
  heads_slide(4, 6, "print", &small);
  for (const Rect& r : small.cells) {
    CHECK(r.w / 6 >= r.h / 6);
    CHECK(r.w / 6 <= 3 * r.h / 6 + 1e-3f);
  }
  // One wide matrix (T x d): square cells, the block letterboxed, centred when asked.
  Tensor wide = Tensor::zeros({1, 128, 512});
  Figure f;
  const Rect area{0, 0, 1800, 800};
  const BlocksLayout l = add_blocks(f, theme_by_name("print"), area, tensor_blocks("out", wide, 0), {}, VAlign::Middle);
  REQUIRE(l.cells.size() == 1);
  CHECK(l.cells[0].w / 512 == Approx(l.cells[0].h / 128));
  CHECK(l.cells[0].y - area.y == Approx(area.bottom() - l.cells[0].bottom()).margin(1));
}

TEST_CASE("figure: touching cells show no seams, the legend's colour bar is one continuous ramp") {
  // 20 x 20 cells of one value, each 5.37 units at fractional positions: too small for gaps,
  // so every pixel inside the heatmap is the map's colour, none lighter where two cells meet.
  Figure f;
  Heatmap h;
  h.rect = {100.3f, 100.3f, 107.4f, 107.4f};
  h.rows = h.cols = 20;
  h.values.assign(400, 0.5f);
  f.heatmap(h);
  const auto px = render_rgba(f, 1920);
  const Color c = colormap(ColorMapId::Viridis, 0.5f);
  int off = 0;
  for (int y = 102; y < 206; ++y)
    for (int x = 102; x < 206; ++x) {
      const uint8_t* p = &px[(static_cast<size_t>(y) * 1920 + static_cast<size_t>(x)) * 4];
      off += std::abs(p[0] - std::lround(c.r * 255)) > 1 || std::abs(p[1] - std::lround(c.g * 255)) > 1 ||
             std::abs(p[2] - std::lround(c.b * 255)) > 1;
    }
  CHECK(off == 0);
  // The legend's bar at 2x (its 64 stops are 13 px each there): no background shows inside it.
  SlideSpec spec;
  spec.title = "t";
  const Slide s = make_slide(spec, theme_by_name("print"));
  const Heatmap* bar = nullptr;
  for (const Item& i : s.figure.items)
    if (const auto* hm = std::get_if<Heatmap>(&i)) bar = hm;
  REQUIRE(bar != nullptr);
  const auto big = render_rgba(s.figure, 3840);
  const int y = static_cast<int>(2 * (bar->rect.y + bar->rect.h / 2));
  int white = 0;
  for (int x = static_cast<int>(2 * bar->rect.x) + 4; x < static_cast<int>(2 * bar->rect.right()) - 4; ++x) {
    const uint8_t* p = &big[(static_cast<size_t>(y) * 3840 + static_cast<size_t>(x)) * 4];
    white += p[0] > 240 && p[1] > 240 && p[2] > 240;
  }
  CHECK(white == 0);
}

TEST_CASE("figure: the overlap check finds two labels drawn on top of each other") {
  Figure f;
  f.text(100, 100, "고양이가", 32, {});
  f.text(110, 105, "<pad>", 32, {});
  f.text(100, 200, "far away", 32, {});
  CHECK(overlapping_texts(f).size() == 1);
  f.text(1900, 500, "off the right edge", 32, {});
  CHECK(texts_outside(f).size() == 1);
}

TEST_CASE("figure: the legend lists the NaN mark only when NaN is present") {
  const Tensor t = weights(2, 4);
  CHECK(legend_for(tensor_blocks("alpha", t, 0), "alpha").nan);
  Tensor clean = Tensor::zeros({1, 2, 4, 4});
  CHECK_FALSE(legend_for(tensor_blocks("alpha", clean, 0), "alpha").nan);
}

TEST_CASE("figure: tensor blocks follow the step's layout: a view stays one matrix, a transpose gives one block per head") {
  Tensor t = Tensor::zeros({2, 3, 2, 4});  // (B, T, h, dk) like q_view
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = static_cast<float>(i);
  const auto view = tensor_blocks("q_view", t, 1);
  REQUIRE(view.size() == 1);
  CHECK(view[0].rows == 3);
  CHECK(view[0].cols == 8);
  // element (b=1, t=2, h=1, j=3) = 24 + 2*8 + 1*4 + 3, at row 2, column 1*4 + 3
  CHECK(view[0].values[2 * 8 + 1 * 4 + 3] == 47.0f);
  CHECK(view[0].map == ColorMapId::Diverging);
  CHECK(view[0].lo == -view[0].hi);
  // The same numbers as (B, h, T, dk), like q_heads: head 1's block, its row 2
  const Tensor heads = t.transpose(1, 2);
  const auto blocks = tensor_blocks("q_heads", heads, 1);
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[1].name == "head 1");
  CHECK(blocks[1].rows == 3);
  CHECK(blocks[1].cols == 4);
  CHECK(blocks[1].values[2 * 4 + 3] == 47.0f);
}

TEST_CASE("figure: SVG has real text, its title, one element per label, and parses as XML") {
  const Figure f = heads_slide(4, 6);
  const std::string svg = svg_document(f, 1920);
  CHECK(svg.find("<title>alpha: 주의 가중치</title>") != std::string::npos);
  CHECK(count(svg, "<text class=\"label\"") == texts_with_role(f, "label"));
  CHECK(svg.find("&lt;pad&gt;") != std::string::npos);  // escaped, not dropped
  CHECK(svg.find("url(#mark-nan)") != std::string::npos);
  const std::string path = scratch("slide.svg");
  std::string error;
  REQUIRE(write_svg(f, path, 1920, &error));
  CHECK(std::system(("xmllint --noout " + path).c_str()) == 0);
}

TEST_CASE("figure: a heatmap above 64x64 cells is one embedded image, so the article view stays small") {
  const Figure f = heads_slide(8, 128);
  const std::string svg = svg_document(f, 1920);
  CHECK(count(svg, "<image ") == 8);
  CHECK(svg.size() < 2u * 1024 * 1024);
}

TEST_CASE("figure: PNG is the asked size, the same figure twice gives the same pixels") {
  const Figure f = heads_slide(4, 6);
  const auto a = render_rgba(f, 1280), b = render_rgba(f, 1280);
  CHECK(a.size() == 1280u * 720 * 4);
  CHECK(a == b);
  CHECK(pixel_height(f, 1920) == 1080);
}

TEST_CASE("figure: a PDF deck has one page per figure and its Korean text is searchable") {
  std::vector<Figure> pages = {heads_slide(4, 6), heads_slide(2, 4, "projector"), heads_slide(1, 3)};
  const std::string path = scratch("deck.pdf");
  std::string error;
  REQUIRE(write_pdf(pages, path, "deck", &error));
  CHECK(std::system(("pdfinfo " + path + " | grep -q '^Pages: *3$'").c_str()) == 0);
  CHECK(std::system(("pdftotext " + path + " - | grep -q '고양이가'").c_str()) == 0);
}

TEST_CASE("figure: an unwritable path fails with one line and leaves no file, temporary or final") {
  std::string error;
  CHECK_FALSE(write_png(heads_slide(1, 3), "/nonexistent-dir/x.png", 640, &error));
  CHECK(error.find("/nonexistent-dir/x.png") == 0);
  CHECK(error.find('\n') == std::string::npos);
  CHECK_FALSE(write_pdf({heads_slide(1, 3)}, "/nonexistent-dir/x.pdf", "x", &error));
  CHECK_FALSE(fs::exists("/nonexistent-dir"));
}

TEST_CASE("figure: an animated GIF decodes with its frame count, size and delays") {
  std::vector<GifFrame> frames;
  for (int k = 0; k < 4; ++k) frames.push_back({render_rgba(heads_slide(1 + k % 2, 4), 320), 10 + k});
  const std::string path = scratch("anim.gif");
  std::string error;
  REQUIRE(write_gif(path, 320, 180, frames, &error));
  int err = 0;
  GifFileType* gif = DGifOpenFileName(path.c_str(), &err);
  REQUIRE(gif != nullptr);
  REQUIRE(DGifSlurp(gif) == GIF_OK);
  CHECK(gif->ImageCount == 4);
  CHECK(gif->SWidth == 320);
  CHECK(gif->SHeight == 180);
  GraphicsControlBlock gcb;
  REQUIRE(DGifSavedExtensionToGCB(gif, 3, &gcb) == GIF_OK);
  CHECK(gcb.DelayTime == 13);
  DGifCloseFile(gif, &err);
}

TEST_CASE("figure: word wrap keeps whole words and marks text it had to leave out") {
  const auto lines = wrap_text("one two three four five six seven eight nine ten", 32, 200, 2);
  REQUIRE(lines.size() == 2);
  for (const auto& l : lines) CHECK(text_width(l, 32) <= 200);
  CHECK(lines.back().find("…") != std::string::npos);
  CHECK(summarize_labels({"고양이가", "a", "<pad>"}, "rows") == "3 rows: 고양이가 … <pad>");
}

// [SECTION] line plots and bar charts (plot.h)

TEST_CASE("figure: a line plot draws every point where its value is and each marker at its x") {
  // A loss curve that falls at step 750 and a second that stays flat, on a slide's visual.
  const std::vector<std::pair<double, double>> fall = {{0, 4.5}, {250, 4.1}, {500, 3.99}, {750, 0.37}, {1000, 0.11}, {3000, 0.05}};
  const std::vector<std::pair<double, double>> flat = {{0, 4.5}, {1500, 4.2}, {3000, 4.2}};
  SlideSpec spec;
  spec.title = "loss per part";
  spec.has_legend = false;
  Slide s = make_slide(spec, print_theme());
  LinePlot p;
  p.title = "loss (nats)";
  p.x_hi = 3000;
  p.y_hi = 5;
  p.x_unit = "step";
  p.series = {{"repeated part", rgb(0xE69F00), fall, 4}, {"first copy", rgb(0x3B75AF), flat, 4}};
  // Two markers at the same step: the second label moves down instead of overlapping.
  p.markers = {{750, "phase change", rgb(0xD55E00), false}, {750, "this step", rgb(0x202020), true}};
  const Rect area{s.visual.x, s.visual.y, s.visual.w / 2, s.visual.h / 2};
  const PlotLayout L = add_line_plot(s.figure, print_theme(), area, p);

  REQUIRE(area.contains(L.axes));
  CHECK(L.x_at(0) == Approx(L.axes.x));
  CHECK(L.x_at(3000) == Approx(L.axes.right()));
  CHECK(L.y_at(0) == Approx(L.axes.bottom()));
  CHECK(L.y_at(5) == Approx(L.axes.y));
  CHECK(L.y_at(2.5) == Approx(L.axes.y + L.axes.h / 2));
  REQUIRE(L.series_lines.size() == 2);
  for (size_t k = 0; k < 2; ++k) {
    const auto& pts = k == 0 ? fall : flat;
    REQUIRE(L.series_lines[k].second == pts.size() - 1);
    for (size_t i = 0; i + 1 < pts.size(); ++i) {
      const auto& ln = std::get<Line>(s.figure.items[L.series_lines[k].first + i]);
      // Map the drawn ends back to values: they are the points, in order.
      CHECK((ln.x1 - L.axes.x) / L.axes.w * 3000 == Approx(pts[i].first).margin(1e-3));
      CHECK((L.axes.bottom() - ln.y1) / L.axes.h * 5 == Approx(pts[i].second).margin(1e-4));
      CHECK((ln.x2 - L.axes.x) / L.axes.w * 3000 == Approx(pts[i + 1].first).margin(1e-3));
      CHECK((L.axes.bottom() - ln.y2) / L.axes.h * 5 == Approx(pts[i + 1].second).margin(1e-4));
    }
  }
  // The drop: the segment into step 750 falls by 3.62 nats of 5, i.e. 72 % of the axes.
  const auto& drop = std::get<Line>(s.figure.items[L.series_lines[0].first + 2]);
  CHECK(drop.y2 - drop.y1 == Approx(0.724 * L.axes.h).epsilon(1e-3));
  REQUIRE(L.marker_lines.size() == 2);
  for (size_t m : L.marker_lines) {
    const auto& ln = std::get<Line>(s.figure.items[m]);
    CHECK(ln.x1 == Approx(L.axes.x + L.axes.w * 0.25f));
    CHECK(ln.x2 == ln.x1);
    CHECK(ln.y1 == Approx(L.axes.y));
    CHECK(ln.y2 == Approx(L.axes.bottom()));
  }
  CHECK(std::get<Line>(s.figure.items[L.marker_lines[1]]).dashed);
  CHECK(overlapping_texts(s.figure).empty());
  CHECK(texts_outside(s.figure).empty());
  size_t legend = 0;
  for (const Item& i : s.figure.items)
    if (const auto* t = std::get_if<Text>(&i)) {
      CHECK(t->size >= kLabelMin - 6);  // the footer is 22; every plot label is >= 28
      if (t->role == "label" || t->role == "legend") CHECK(t->size >= kLabelMin);
      legend += t->role == "legend";
    }
  CHECK(legend == 2);
}

TEST_CASE("figure: bars stand as tall as their values and say them; a bad chart is refused") {
  SlideSpec spec;
  spec.title = "ablation";
  spec.has_legend = false;
  Slide s = make_slide(spec, print_theme());
  BarChart c;
  c.title = "accuracy";
  c.bars = {{"as trained", rgb(0x3B75AF)}, {"4 heads knocked out", rgb(0xD55E00)}};
  c.groups = {{"first copy", {0.02, 0.015}}, {"repeated part", {1.0, 0.0119}}};
  c.decimals = 1;
  c.value_scale = 100;
  c.suffix = " %";
  const BarLayout L = add_bar_chart(s.figure, print_theme(), s.visual, c);
  REQUIRE(L.bar_boxes.size() == 2);
  for (size_t g = 0; g < 2; ++g)
    for (size_t b = 0; b < 2; ++b) {
      const Box& box = std::get<Box>(s.figure.items[L.bar_boxes[g][b]]);
      CHECK(box.rect.h == Approx(c.groups[g].values[b] * L.axes.h).margin(1e-3));
      CHECK(box.rect.bottom() == Approx(L.axes.bottom()));
      CHECK(box.fill == c.bars[b].second);
    }
  CHECK(std::get<Text>(s.figure.items[L.bar_texts[1][0]]).text == "100.0 %");
  CHECK(std::get<Text>(s.figure.items[L.bar_texts[1][1]]).text == "1.2 %");
  CHECK(overlapping_texts(s.figure).empty());
  CHECK(texts_outside(s.figure).empty());

  c.groups[0].values.pop_back();
  CHECK_THROWS_WITH(add_bar_chart(s.figure, print_theme(), s.visual, c),
                    "bar chart 'accuracy': group 'first copy' has 1 values for 2 bars");
  LinePlot p;
  p.title = "empty";
  p.x_hi = 0;
  CHECK_THROWS_WITH(add_line_plot(s.figure, print_theme(), s.visual, p), "plot 'empty': the axis range is empty");
}

TEST_CASE("figure: a signed bar chart hangs negative bars below the zero line") {
  SlideSpec spec;
  spec.title = "ablation";
  spec.has_legend = false;
  Slide s = make_slide(spec, print_theme());
  BarChart c;
  c.title = "repeat accuracy change (points)";
  c.bars = {{"change", rgb(0xD55E00)}};
  c.groups = {{"0.0", {-3.0}}, {"0.1", {-79.1}}, {"0.2", {0.0}}, {"1.0", {2.5}}, {"1.3", {-0.04}}};
  c.y_lo = -80;
  c.y_hi = 10;
  c.decimals = 1;
  const BarLayout L = add_bar_chart(s.figure, print_theme(), s.visual, c);
  const float zero = L.y_at(0), unit = L.axes.h / 90.0f;
  CHECK(zero == Approx(L.axes.y + 10 * unit).margin(1e-3));
  for (size_t g = 0; g < c.groups.size(); ++g) {
    const double v = c.groups[g].values[0];
    const Box& box = std::get<Box>(s.figure.items[L.bar_boxes[g][0]]);
    CHECK(box.rect.h == Approx(std::fabs(v) * unit).margin(1e-3));
    CHECK((v < 0 ? box.rect.y : box.rect.bottom()) == Approx(zero).margin(1e-3));  // from the zero line
    const Text& t = std::get<Text>(s.figure.items[L.bar_texts[g][0]]);
    if (v < 0) CHECK(t.y > box.rect.bottom());  // the value beyond the bar's end
    if (v > 0) CHECK(t.y < box.rect.y);
  }
  CHECK(std::get<Text>(s.figure.items[L.bar_texts[1][0]]).text == "-79.1");
  CHECK(std::get<Text>(s.figure.items[L.bar_texts[4][0]]).text == "0.0");  // not -0.0
  CHECK(overlapping_texts(s.figure).empty());
  CHECK(texts_outside(s.figure).empty());
  c.y_lo = 1;  // the axis must hold 0
  CHECK_THROWS_WITH(add_bar_chart(s.figure, print_theme(), s.visual, c),
                    "bar chart 'repeat accuracy change (points)': the axis must run from at most 0 to at least 0, "
                    "bottom below top");
}

// [SECTION] the flash tile grid ------------------------------------------------------------

namespace {

// q, k, v (1, 1, 6, 4) with values whose row maxima move from tile to tile, so the running
// max rises and the rescale factor shows.
struct FlashCase {
  Tensor q = Tensor::zeros({1, 1, 6, 4}), k = Tensor::zeros({1, 1, 6, 4}), v = Tensor::zeros({1, 1, 6, 4});
  float scale = 0.5f;
  FlashCoreResult core;
  FlashCase(bool causal, int64_t block) {
    for (int64_t i = 0; i < 24; ++i) {
      q.f32()[i] = std::sin(0.7f * static_cast<float>(i)) * 1.5f;
      k.f32()[i] = 0.2f * static_cast<float>(i % 9) - 0.5f;  // later keys score higher
      v.f32()[i] = std::cos(0.3f * static_cast<float>(i));
    }
    FlashMask mask;
    mask.causal = causal;
    FlashOptions o;
    o.block_q = o.block_k = block;
    o.record_tiles = true;
    o.threads = 1;
    core = flash_attention_core(q, k, v, mask, scale, o);
  }
  // The plain-loop row max / sum of exp over the visible keys (what the final m and l must be).
  float row_max(int64_t i, bool causal) const {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < 6; ++j)
      if (!causal || j <= i) m = std::max(m, score(i, j));
    return m;
  }
  float row_sum(int64_t i, bool causal) const {
    double l = 0;
    for (int64_t j = 0; j < 6; ++j)
      if (!causal || j <= i) l += std::exp(static_cast<double>(score(i, j) - row_max(i, causal)));
    return static_cast<float>(l);
  }
  float score(int64_t i, int64_t j) const {
    float s = 0;
    for (int64_t c = 0; c < 4; ++c) s += q.f32()[i * 4 + c] * k.f32()[j * 4 + c];
    return s * scale;
  }
};

FlashTiles tiles_of(const FlashCase& c, int64_t block, size_t event) {
  FlashTiles in;
  in.events = &c.core.events;
  in.tq = in.tk = 6;
  in.block_q = in.block_k = block;
  in.event = event;
  in.q_tokens = {"고양이가", "생선을", "먹고", "잠을", "잤다", "<pad>"};
  in.k_tokens = in.q_tokens;
  return in;
}

Figure flash_page(const FlashCase& c, int64_t block, size_t event, FlashTilesLayout* layout,
                  const std::string& theme = "print") {
  SlideSpec spec;
  spec.title = "FlashAttention · head 0 · Br 2 × Bc 2";
  spec.caption = "Each tile updates every row's running max m and sum l.";
  const FlashTiles in = tiles_of(c, block, event);
  spec.legend = flash_legend(in, "scores S");
  Slide s = make_slide(spec, theme_by_name(theme));
  *layout = add_flash_tiles(s.figure, theme_by_name(theme), s.visual, in);
  return s.figure;
}

const Text& text_at(const Figure& f, size_t i) { return std::get<Text>(f.items.at(i)); }

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TEST_CASE("figure: the flash grid draws the engine trace's running m and l of every row, at every event") {
  const FlashCase c(true, 2);
  const auto& ev = c.core.events;
  // 3 x 3 tiles, causal: the three above the diagonal are skipped; 3 finals.
  REQUIRE(ev.size() == 12);
  size_t rises = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    const FlashEvent& e = ev[i];
    FlashTilesLayout l;
    const Figure f = flash_page(c, 2, i, &l);
    INFO("event " << i << " kind " << flash_event_kind_name(e.kind));
    CHECK(overlapping_texts(f).empty());
    CHECK(texts_outside(f).empty());
    CHECK(l.tile_boxes.size() == 9);
    // all six rows fit: listed in order; the other blocks' rows as their last event left them
    REQUIRE(l.rows.size() == 6);
    for (int64_t q = 0; q < 6; ++q) {
      CHECK(l.rows[static_cast<size_t>(q)] == q);
      if (q >= e.q0 && q < e.q0 + e.rows) continue;
      const FlashEvent* fin = nullptr;
      bool started = false;
      for (size_t k = 0; k <= i; ++k) {
        started |= ev[k].q_block == q / 2 && ev[k].kind == FlashEventKind::Tile;
        if (ev[k].q_block == q / 2 && ev[k].kind == FlashEventKind::Final) fin = &ev[k];
      }
      const std::string m = text_at(f, l.m_text[static_cast<size_t>(q)]).text;
      if (fin) CHECK(m == flash_number(c.row_max(q, true)));
      if (!started) CHECK(m == "-inf");
    }
    for (size_t r = 0; r < static_cast<size_t>(e.rows); ++r) {
      const size_t at = static_cast<size_t>(e.q0) + r;
      const std::string m = text_at(f, l.m_text[at]).text, lt = text_at(f, l.l_text[at]).text;
      const int64_t rr = static_cast<int64_t>(r);
      if (e.kind == FlashEventKind::Tile) {
        // "before → after" where the value changed, else the value: the trace's own numbers
        CHECK(ends_with(m, flash_number(e.m_after.at({rr}))));
        CHECK(ends_with(lt, flash_number(e.l_after.at({rr}))));
        if (e.m_before.at({rr}) != e.m_after.at({rr})) CHECK(m.rfind(flash_number(e.m_before.at({rr})) + " → ", 0) == 0);
        const bool rose = std::isfinite(e.m_before.at({rr})) && e.m_after.at({rr}) > e.m_before.at({rr});
        CHECK((l.rescale_text[at] != SIZE_MAX) == rose);
        if (rose) {
          ++rises;
          CHECK(text_at(f, l.rescale_text[at]).text == "×" + flash_number(e.rescale.at({rr})));
          CHECK(e.rescale.at({rr}) < 1.0f);
        }
      } else if (e.kind == FlashEventKind::Final) {
        // the final running max and sum are the plain row max and sum of exp over visible keys
        const int64_t q = e.q0 + rr;
        CHECK(m == flash_number(e.m.at({rr})));
        CHECK(lt == flash_number(e.l.at({rr})));
        CHECK(m == flash_number(c.row_max(q, true)));
        CHECK(std::fabs(std::stof(lt) - c.row_sum(q, true)) < 2e-3f);
      }
    }
  }
  CHECK(rises > 0);  // the case makes the max rise at least once (else the check above is idle)
}

TEST_CASE("figure: the flash grid crosses out skipped tiles, outlines the event's tile, fills seen tiles") {
  const FlashCase c(true, 2);
  const auto& ev = c.core.events;
  const size_t last = ev.size() - 1;
  FlashTilesLayout l;
  const Figure f = flash_page(c, 2, last, &l, "projector");
  size_t skips = 0;
  const Heatmap* grid = nullptr;
  for (const Item& i : f.items) {
    if (const auto* t = std::get_if<Text>(&i)) skips += t->text == "skip";
    if (const auto* h = std::get_if<Heatmap>(&i))
      if (h->rows == 6 && h->cols == 6) grid = h;
  }
  CHECK(skips == 3);
  REQUIRE(grid != nullptr);
  // every visible score as the tiles computed it; hidden cells of visited tiles are -inf
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      const float v = grid->values[static_cast<size_t>(i * 6 + j)];
      if (j <= i) CHECK(std::fabs(v - c.score(i, j)) < 1e-5f);
      else if (j / 2 == i / 2) CHECK(std::isinf(v));
    }
  // the legend shows the -inf mark once a hidden cell has been seen, not before
  CHECK(flash_legend(tiles_of(c, 2, last), "S").neginf);
  const FlashCase open(false, 2);  // no mask: no cell is ever hidden
  CHECK_FALSE(flash_legend(tiles_of(open, 2, open.core.events.size() - 1), "S").neginf);
  // the lesson's tile lookup finds the visit of tile (1, 0)
  const size_t at = flash_event_of_tile(ev, 1, 0);
  REQUIRE(at < ev.size());
  CHECK(ev[at].q_block == 1);
  CHECK(ev[at].k_block == 0);
  CHECK(flash_event_of_tile(ev, 7, 7) == ev.size());
}

TEST_CASE("figure: the flash slide as SVG and PDF keeps its m / l numbers and Korean words as text") {
  const FlashCase c(true, 2);
  FlashTilesLayout l;
  const size_t event = 4;  // a tile of query block 1
  const Figure f = flash_page(c, 2, event, &l, "projector");
  const std::string svg = svg_document(f, 1920);
  for (size_t i : l.m_text) CHECK(svg.find(">" + text_at(f, i).text + "</text>") != std::string::npos);
  CHECK(svg.find("&lt;pad&gt;") != std::string::npos);  // the last token, escaped
  const std::string path = scratch("flash.svg");
  std::string error;
  REQUIRE(write_svg(f, path, 1920, &error));
  CHECK(std::system(("xmllint --noout " + path).c_str()) == 0);
  const std::string pdf = scratch("flash.pdf");
  REQUIRE(write_pdf({f}, pdf, "flash", &error));
  const FlashEvent& e = c.core.events[event];
  REQUIRE(e.kind == FlashEventKind::Tile);
  // the row labels (Korean tokens) and the event's running sums, found by pdftotext
  CHECK(std::system(("pdftotext " + pdf + " - | grep -q '생선을'").c_str()) == 0);
  CHECK(std::system(("pdftotext " + pdf + " - | grep -qF -- '" + flash_number(e.l_after.at({0})) + "'").c_str()) == 0);
}

TEST_CASE("figure: a flash block taller than the table lists what fits and says how many rows are left") {
  // 64 query rows in one block: the table cannot list them all at >= 28 units.
  Tensor q = Tensor::zeros({1, 1, 64, 4}), k = Tensor::zeros({1, 1, 64, 4}), v = Tensor::zeros({1, 1, 64, 4});
  for (int64_t i = 0; i < q.numel(); ++i) q.f32()[i] = k.f32()[i] = v.f32()[i] = 0.01f * static_cast<float>(i % 13);
  FlashOptions o;
  o.block_q = o.block_k = 64;
  o.record_tiles = true;
  o.threads = 1;
  const FlashCoreResult core = flash_attention_core(q, k, v, FlashMask(), 0.5f, o);
  FlashTiles in;
  in.events = &core.events;
  in.tq = in.tk = 64;
  in.block_q = in.block_k = 64;
  in.event = 0;
  Slide s = make_slide({"flash", "caption", "", {}, true}, print_theme());
  const FlashTilesLayout l = add_flash_tiles(s.figure, print_theme(), s.visual, in);
  CHECK(l.rows.size() >= 8);
  CHECK(l.rows.size() < 64);
  bool more = false;
  for (const Item& i : s.figure.items)
    if (const auto* t = std::get_if<Text>(&i))
      more |= t->text == "… " + std::to_string(64 - l.rows.size()) + " more rows";
  CHECK(more);
  CHECK(overlapping_texts(s.figure).empty());
  for (const Item& i : s.figure.items)
    if (const auto* t = std::get_if<Text>(&i)) CHECK(t->size >= kLabelMin - 0.01f);
  in.event = core.events.size();
  CHECK_THROWS_AS(add_flash_tiles(s.figure, print_theme(), s.visual, in), Error);
}

// [SECTION] the memory strip and the table ---------------------------------------------------

namespace {

// (1, 6, 16) holding its own storage index, as q_proj; q_heads is its (1, 4, 6, 4) transposed view.
Tensor projected() {
  Tensor t = Tensor::zeros({1, 6, 16});
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = static_cast<float>(i) - 40.0f;
  return t;
}

}  // namespace

TEST_CASE("figure: the memory strip walks a transposed view through the same storage by its strides") {
  const Tensor proj = projected();
  const Tensor heads = proj.view({1, 6, 4, 4}).transpose(1, 2);  // strides (96, 4, 16, 1)
  REQUIRE_FALSE(heads.is_contiguous());
  MemorySpec spec;
  spec.strips = {{&heads, 0, "storage #1 (q_heads)"}};
  spec.unit = 16;
  spec.headline = "storage #1 · shape (1, 4, 6, 4) · strides (96, 4, 16, 1) · not contiguous";
  spec.detail = "same storage, new strides: 0 bytes copied";
  Slide s = make_slide({"q_heads in memory", "transpose changes the strides, not the memory.", "", memory_legend(spec, "q_heads"), true},
                       print_theme());
  const MemoryLayout l = add_memory_strips(s.figure, print_theme(), s.visual, spec);
  CHECK(l.wrap == 16);  // one token per strip row
  REQUIRE(l.walked.size() == 1);
  // the walk is the tensor's own storage order: head 0's token 0 (cells 0..3), token 1 (16..19), ...
  REQUIRE(l.walked[0].size() == 24);  // one head: T x dk
  for (int64_t e = 0; e < 24; ++e) CHECK(l.walked[0][static_cast<size_t>(e)] == heads.storage_index({0, 0, e / 4, e % 4}));
  CHECK(l.walked[0][4] == 16);
  // each order number sits in the cell it names
  const Rect strip = l.strips.front();
  const float cell = strip.w / 16;
  REQUIRE(l.numbers[0].size() == 24);
  for (size_t e = 0; e < l.numbers[0].size(); ++e) {
    const Text& t = text_at(s.figure, l.numbers[0][e]);
    CHECK(t.text == std::to_string(e));
    const int64_t c = l.walked[0][e];
    CHECK(std::fabs(t.x - (strip.x + (static_cast<float>(c % 16) + 0.5f) * cell)) < 0.01f);
    CHECK(std::fabs(t.y - (strip.y + (static_cast<float>(c / 16) + 0.5f) * cell)) < 0.01f);
  }
  // the cells hold the stored values in storage order
  for (const Item& i : s.figure.items)
    if (const auto* h = std::get_if<Heatmap>(&i))
      if (h->cols == 16 && h->rows == 6)
        for (size_t k = 0; k < 96; ++k) CHECK(h->values[k] == proj.f32()[k]);
  CHECK(overlapping_texts(s.figure).empty());
  CHECK(texts_outside(s.figure).empty());
}

TEST_CASE("figure: a copy's memory slide walks the source in logical order and the new strip in storage order") {
  const Tensor proj = projected();
  const Tensor heads = proj.view({1, 6, 4, 4}).transpose(1, 2);
  const Tensor copy = heads.contiguous();
  REQUIRE_FALSE(copy.shares_storage_with(heads));
  MemorySpec spec;
  spec.strips = {{&heads, 0, "storage #1 (q_heads)"}, {&copy, 0, "new storage #2 (copy): 384 B copied"}};
  spec.unit = 16;
  Slide s = make_slide({"copy", "", "", {}, false}, projector_theme());
  const MemoryLayout l = add_memory_strips(s.figure, projector_theme(), s.visual, spec);
  REQUIRE(l.strips.size() == 2);
  CHECK(l.strips[1].y > l.strips[0].bottom());
  for (size_t e = 0; e < l.walked[1].size(); ++e) CHECK(l.walked[1][e] == static_cast<int64_t>(e));
  // element e of the copy holds what the source's walk reads at step e
  const StripCells src = strip_cells(heads, 0), dst = strip_cells(copy, 0);
  for (size_t e = 0; e < 96; ++e)
    CHECK(dst.values[static_cast<size_t>(dst.walk[e])] == src.values[static_cast<size_t>(src.walk[e])]);
  CHECK(overlapping_texts(s.figure).empty());
  CHECK(texts_outside(s.figure).empty());
  CHECK_THROWS_AS(strip_cells(heads, 1), Error);
}

TEST_CASE("figure: a table picks the largest readable type, wraps long names, and counts the rows left out") {
  TableSpec t;
  t.header = {"what", "sizes", "value"};
  t.align = {Anchor::Start, Anchor::Start, Anchor::End};
  t.bold = {false, false, true};
  t.rows = {{"parameters of the four projections (no biases)", "d=512 h=8", "1,048,576"},
            {"score tensor, one layer", "B=1 T=4096 h=8", "536,870,912 B (512 MiB, 537 MB)"},
            {"KV 캐시 (키·값 헤드 g개)", "d=4096 h=32 g=8 L=32 T=4096", "536,870,912 B (512 MiB, 537 MB)"}};
  Slide s = make_slide({"Figures computed by the engine", "", "", {}, false}, print_theme());
  const TableLayout l = add_table(s.figure, print_theme(), s.visual, t);
  CHECK(l.size >= kLabelMin);
  CHECK(l.size <= 40);
  REQUIRE(l.rows_shown == 3);
  for (size_t r = 0; r < 3; ++r) {
    CHECK(text_at(s.figure, l.cells[r][2]).text == t.rows[r][2]);
    CHECK(text_at(s.figure, l.cells[r][1]).text == t.rows[r][1]);
    CHECK(t.rows[r][0].rfind(text_at(s.figure, l.cells[r][0]).text, 0) == 0);  // a first line of it
  }
  CHECK(overlapping_texts(s.figure).empty());
  CHECK(texts_outside(s.figure).empty());

  TableSpec many = t;
  for (int i = 0; i < 30; ++i) many.rows.push_back({"row " + std::to_string(i), "T=" + std::to_string(i), std::to_string(i * i)});
  Slide m = make_slide({"many", "", "", {}, false}, print_theme());
  const TableLayout ml = add_table(m.figure, print_theme(), m.visual, many);
  CHECK(ml.size == kLabelMin);
  CHECK(ml.rows_shown < many.rows.size());
  bool more = false;
  for (const Item& i : m.figure.items)
    if (const auto* x = std::get_if<Text>(&i))
      more |= x->text == "… " + std::to_string(many.rows.size() - ml.rows_shown) + " more rows";
  CHECK(more);
  CHECK(overlapping_texts(m.figure).empty());
  CHECK(texts_outside(m.figure).empty());
  many.rows.push_back({"too", "few"});
  CHECK_THROWS_AS(add_table(m.figure, print_theme(), m.visual, many), Error);
}

TEST_CASE("figure: up to three figures become number cards, the value the largest text on each") {
  TableSpec t;
  t.header = {"what", "sizes", "the engine's value"};
  t.rows = {{"KV cache (g KV heads)", "d=4096 h=32 g=8 L=32 T=4096", "536,870,912 B (512 MiB, 537 MB)"},
            {"KV 캐시 (헤드 h개)", "d=4096 h=32 L=32 B=1 T=4096 fp16", "2,147,483,648 B (2.00 GiB, 2.15 GB)"}};
  Slide s = make_slide({"KV cache", "", "", {}, false}, print_theme());
  const size_t before = s.figure.items.size();
  REQUIRE(add_number_cards(s.figure, print_theme(), s.visual, t));
  float name_size = 0, value_size = 0;
  size_t values = 0;
  for (size_t i = before; i < s.figure.items.size(); ++i)
    if (const auto* x = std::get_if<Text>(&s.figure.items[i])) {
      CHECK(s.visual.contains(text_box(*x)));
      if (x->role == "value") {
        ++values;
        CHECK((x->text == t.rows[0][2] || x->text == t.rows[1][2]));  // whole, never cut
        value_size = x->size;
      } else if (x->text == "KV cache (g KV heads)") {
        name_size = x->size;
      }
    }
  CHECK(values == 2);
  CHECK(value_size >= kCardValueMin);
  CHECK(value_size > name_size);
  CHECK(name_size >= kLabelMin);
  CHECK(overlapping_texts(s.figure).empty());

  // Four rows, or a value too long for a card at the smallest size: nothing drawn, the caller
  // draws the table instead.
  TableSpec four = t;
  four.rows.push_back(t.rows[0]);
  four.rows.push_back(t.rows[1]);
  TableSpec long_value = t;
  long_value.rows[0][2] = std::string(60, '9');
  for (const TableSpec* spec : {&four, &long_value}) {
    Figure f;
    CHECK_FALSE(add_number_cards(f, print_theme(), {0, 0, 1800, 700}, *spec));
    CHECK(f.items.empty());
  }
  TableSpec bad = t;
  bad.rows.push_back({"too", "few"});
  Figure f;
  CHECK_THROWS_AS(add_number_cards(f, print_theme(), {0, 0, 1800, 700}, bad), Error);
}

TEST_CASE("figure: plot ticks fall on round numbers inside the range") {
  using V = std::vector<double>;
  CHECK(nice_ticks(0, 13.8) == V{0, 5, 10});
  CHECK(nice_ticks(0, 1) == V{0, 0.5, 1});
  CHECK(nice_ticks(0, 3000) == V{0, 1000, 2000, 3000});
  CHECK(nice_ticks(-0.3, 0.9) == V{0, 0.5});
  CHECK(nice_ticks(2.2, 2.9).size() >= 2);
  // drawn: the y labels of a 0 .. 13.8 loss plot are 0, 5, 10, none overlapping
  LinePlot p;
  p.title = "loss";
  p.x_hi = 46;
  p.y_hi = 13.8;
  p.series.push_back({"full", rgb(0x0072B2), {{0, 4}, {46, 2}}});
  Figure f;
  add_line_plot(f, print_theme(), {0, 0, 900, 500}, p);
  std::vector<std::string> texts;
  for (const Item& i : f.items)
    if (const auto* t = std::get_if<Text>(&i)) texts.push_back(t->text);
  for (const char* want : {"0", "5", "10", "46"}) CHECK(std::count(texts.begin(), texts.end(), want) >= 1);
  CHECK(std::count(texts.begin(), texts.end(), "6.9") == 0);
  CHECK(overlapping_texts(f).empty());
}

TEST_CASE("figure: a legend's long name and its mark swatches never cover each other") {
  SlideSpec spec;
  spec.title = "scores_masked → alpha";
  spec.legend.map = ColorMapId::Diverging;
  spec.legend.what = "scores_masked · PuOr (diverging), shared by every head";
  spec.legend.nan = spec.legend.neginf = spec.legend.posinf = true;
  const Slide s = make_slide(spec, print_theme());
  std::vector<Rect> swatches, texts;
  for (const Item& i : s.figure.items) {
    if (const auto* b = std::get_if<Box>(&i); b && b->mark != Mark::None) swatches.push_back(b->rect);
    if (const auto* t = std::get_if<Text>(&i)) texts.push_back(text_box(*t));
  }
  REQUIRE(swatches.size() == 3);
  for (const Rect& w : swatches)
    for (const Rect& t : texts) CHECK_FALSE(w.overlaps(t));
  CHECK(overlapping_texts(s.figure).empty());
  CHECK(texts_outside(s.figure).empty());
}

TEST_CASE("figure: slide PNG labels are drawn where the layout's text boxes say, and nowhere else") {
  // The texts alone, on the background: every inked pixel must fall inside some text's box
  // (text_box: the measured width, 1.2 x the size high) and every label's box must hold ink.
  const Figure full = heads_slide(4, 6);
  Figure texts = full;
  texts.items.clear();
  std::vector<Rect> boxes;
  for (const Item& i : full.items)
    if (const auto* t = std::get_if<Text>(&i)) {
      texts.items.push_back(*t);
      boxes.push_back(text_box(*t));
    }
  REQUIRE(boxes.size() > 40);
  const auto px = render_rgba(texts, 1920);
  const Color bg = full.background;
  auto inked = [&](int x, int y) {
    const uint8_t* p = &px[(static_cast<size_t>(y) * 1920 + static_cast<size_t>(x)) * 4];
    return std::abs(p[0] - std::lround(bg.r * 255)) + std::abs(p[1] - std::lround(bg.g * 255)) +
               std::abs(p[2] - std::lround(bg.b * 255)) > 90;
  };
  std::vector<int> ink(boxes.size(), 0);
  int stray = 0;
  for (int y = 0; y < 1080; ++y)
    for (int x = 0; x < 1920; ++x) {
      if (!inked(x, y)) continue;
      bool inside = false;
      for (size_t b = 0; b < boxes.size(); ++b) {
        const Rect& r = boxes[b];
        if (x >= r.x - 2 && x <= r.right() + 2 && y >= r.y - 2 && y <= r.bottom() + 2) {
          inside = true;
          ++ink[b];
        }
      }
      stray += !inside;
    }
  CHECK(stray == 0);
  for (size_t b = 0; b < boxes.size(); ++b) {
    INFO(std::get<Text>(texts.items[b]).text);
    CHECK(ink[b] > 15);
  }
}

TEST_CASE("figure: column groups get a bracket and a name over their columns and a gap between them") {
  Tensor m = Tensor::zeros({1, 6, 16});
  AxisLabels labels;
  for (int i = 0; i < 6; ++i) labels.rows.push_back("tok" + std::to_string(i));
  for (int j = 0; j < 16; ++j) labels.cols.push_back(std::to_string(j));
  labels.col_groups = {"head 0", "head 1", "head 2", "head 3"};
  Figure f;
  const BlocksLayout l = add_blocks(f, print_theme(), {0, 0, 1800, 700}, tensor_blocks("q_proj", m, 0), labels);
  REQUIRE(l.cells.size() == 1);
  const Rect& cells = l.cells[0];
  std::vector<float> name_x, gap_x;
  for (const Item& i : f.items) {
    if (const auto* t = std::get_if<Text>(&i); t && t->text.rfind("head ", 0) == 0) {
      name_x.push_back(t->x);
      CHECK(t->y < cells.y);  // over the columns
    }
    if (const auto* ln = std::get_if<Line>(&i); ln && ln->x1 == ln->x2 && ln->y1 == cells.y) gap_x.push_back(ln->x1);
  }
  REQUIRE(name_x.size() == 4);
  for (int k = 0; k < 4; ++k) CHECK(name_x[static_cast<size_t>(k)] == Approx(cells.x + cells.w * (k + 0.5f) / 4));
  REQUIRE(gap_x.size() == 3);
  for (int k = 1; k < 4; ++k) CHECK(gap_x[static_cast<size_t>(k - 1)] == Approx(cells.x + cells.w * k / 4));
  CHECK(overlapping_texts(f).empty());
  // Groups that do not divide the columns are not drawn.
  labels.col_groups = {"a", "b", "c"};
  Figure g;
  add_blocks(g, print_theme(), {0, 0, 1800, 700}, tensor_blocks("q_proj", m, 0), labels);
  for (const Item& i : g.items)
    if (const auto* t = std::get_if<Text>(&i)) CHECK(t->text != "a");
}

TEST_CASE("figure: a table spread to fill its area keeps its last row (no '1 more rows' from rounding)") {
  TableSpec t;
  t.header = {"what", "sizes", "the engine's value"};
  t.align = {Anchor::Start, Anchor::Start, Anchor::End};
  const std::string a = "B=1 h=8 T=4096 d_k=64 Br=64 Bc=512", b = "B=1 h=8 T=4096 d_k=64 Br=256 Bc=512";
  t.rows = {{"slow-memory traffic, standard path (elements)", a, "545,259,520"},
            {"slow-memory traffic, tiled path (elements)", a, "272,629,760"},
            {"traffic ratio (standard / tiled)", a, "2"},
            {"slow-memory traffic, tiled path (elements)", b, "71,303,168"},
            {"traffic ratio (standard / tiled)", b, "7.647"},
            {"slow-memory writes, tiled path (elements)", a, "2,097,152"},
            {"q·k^T FLOPs, one layer", "d=512 h=8 B=1 T=4096", "17,179,869,184"}};
  Slide s = make_slide({"Why it is faster", "caption", "", {}, false}, print_theme());
  const TableLayout l = add_table(s.figure, print_theme(), s.visual, t);
  CHECK(l.rows_shown == 7);
  CHECK(l.bottom <= s.visual.bottom() + 0.5f);
  for (const Item& i : s.figure.items)
    if (const auto* x = std::get_if<Text>(&i)) CHECK(x->text.find("more rows") == std::string::npos);
}
