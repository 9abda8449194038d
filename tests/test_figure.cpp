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

#include "engine/tensor.h"
#include "figure/cairo_sink.h"
#include "figure/gif_writer.h"
#include "figure/palette.h"
#include "figure/plot.h"
#include "figure/slide.h"
#include "figure/svg_sink.h"
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

TEST_CASE("figure: tensor blocks follow the step's layout, one per head, values in place") {
  Tensor t = Tensor::zeros({2, 3, 2, 4});  // (B, T, h, dk) like q_view
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = static_cast<float>(i);
  const auto blocks = tensor_blocks("q_view", t, 1);
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[1].rows == 3);
  CHECK(blocks[1].cols == 4);
  // element (b=1, t=2, h=1, j=3) = 24 + 2*8 + 1*4 + 3
  CHECK(blocks[1].values[2 * 4 + 3] == 47.0f);
  CHECK(blocks[0].map == ColorMapId::Diverging);
  CHECK(blocks[0].lo == -blocks[0].hi);
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
