// The memory panel as a slide. See memory_slides.h.
#include "views/memory_slides.h"

#include "engine/cost.h"
#include "engine/error.h"
#include "figure/memory_figure.h"
#include "figure/palette.h"
#include "figure/slide.h"
#include "figure/tensor_figure.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

namespace {

std::string storage_name(lessons::Lang lang, const Step& s) {
  return std::string(in_lang(lang, "저장소 #", "storage #")) + std::to_string(s.storage_id) + " (" + s.name + ")";
}

}  // namespace

fig::MemorySpec memory_spec(const RunData& run, const Step& step, int64_t batch, lessons::Lang lang) {
  if (!step.out.defined() || batch < 0 || batch >= step.out.shape()[0])
    throw Error("batch " + std::to_string(batch) + " is outside 0.." +
                std::to_string(step.out.defined() ? step.out.shape()[0] - 1 : -1));
  const Tensor& out = step.out;
  fig::MemorySpec m;
  m.unit = run.config.d_model;
  m.map = fig::map_for_step(step.name);  // the tensor view's map for this step
  m.headline = std::string(in_lang(lang, "저장소 #", "storage #")) + std::to_string(step.storage_id) + " · " +
               in_lang(lang, "모양 ", "shape ") + format_dims(out.shape()) + " · " + in_lang(lang, "스트라이드 ", "strides ") +
               format_dims(out.strides()) + " · " + (out.is_contiguous() ? in_lang(lang, "연속", "contiguous")
                                                                          : in_lang(lang, "비연속", "not contiguous"));
  const Step* src = step.inputs.empty() ? nullptr : run.run.trace.find(step.inputs.front());
  const bool copy = step.kind == StepKind::Copy && src && src->out.defined();
  if (step.kind == StepKind::View)
    m.detail = std::string(in_lang(lang, "같은 저장소, 새 스트라이드: 0바이트 복사", "same storage, new strides: 0 bytes copied"));
  else if (copy)
    m.detail = std::string(in_lang(lang, "새 저장소: ", "new storage: ")) + human_bytes(step.copied_bytes) +
               in_lang(lang, " 복사함", " copied");
  else if (step.new_bytes > 0)
    m.detail = std::string(in_lang(lang, "새 저장소: ", "new storage: ")) + human_bytes(step.new_bytes);
  if (copy) {
    m.strips.push_back({&src->out, batch, storage_name(lang, *src)});
    m.strips.push_back({&out, batch, std::string(in_lang(lang, "새 ", "new ")) + storage_name(lang, step)});
  } else {
    m.strips.push_back({&out, batch, storage_name(lang, step)});
  }
  return m;
}

std::string try_view_answer(const RunData& run, const Tensor& t, lessons::Lang lang) {
  const Dims target{run.config.batch, run.config.tq, run.config.d_model};
  try {
    return "view" + format_dims(target) + ": " + in_lang(lang, "view 성공 ", "view succeeded ") +
           format_dims(t.view(target).shape());
  } catch (const Error& e) {
    return "view" + format_dims(target) + " · " + in_lang(lang, "엔진의 답: ", "engine says: ") + e.what();
  }
}

figure::Figure memory_slide(const Scenario& scenario, const RunData& run, const SlideView& view) {
  const std::string step_name = view.step.empty() ? scenario.focus_step : view.step;
  const Step* step = run.run.trace.find(step_name);
  if (!step || step->skipped() || !step->out.defined()) {
    SlideView tensor = view;
    tensor.panel = "tensor";
    return step_slide(scenario, run, tensor);  // the page that says why there is nothing
  }
  const int64_t batch = view.batch < 0 ? scenario.focus_batch : view.batch;
  const lessons::Lang lang = view.lang;
  const fig::Theme& th = fig::theme_by_name(view.theme);
  fig::MemorySpec m = memory_spec(run, *step, batch, lang);
  // The memory panel's button: ask the engine for view(B, T, d) on these strides.
  if (view.action == "try-view" && !step->out.is_contiguous()) m.detail = try_view_answer(run, step->out, lang);

  fig::SlideSpec spec;
  spec.title = view.title.empty() ? step_name + in_lang(lang, ": 메모리", " in memory") : view.title;
  spec.caption = view.caption.empty() ? step_caption(step_name, lang) : view.caption;
  const std::string scen_title = lang == lessons::Lang::Ko ? scenario.title_ko : scenario.title_en;
  spec.footer = "attnsim · " + scenario.name + (scen_title.empty() ? "" : " (" + scen_title + ")") + " · " + step_name +
                " · " + in_lang(lang, "배치 ", "batch ") + std::to_string(batch) + " · " +
                in_lang(lang, "선: 논리 순서로 읽는 길", "line: the walk in logical order");
  spec.legend = legend_in_lang(fig::memory_legend(m, step_name + in_lang(lang, " · 저장된 값 · ", " · stored values · ") +
                                                           fig::colormap_name(m.map)),
                               lang);
  fig::Slide s = fig::make_slide(spec, th);
  fig::add_memory_strips(s.figure, th, s.visual, m);
  s.figure.kind = "memory";
  return s.figure;
}

MemoryView memory_view(const MemoryViewSpec& s) {
  if (!s.run || !s.step) throw Error("the memory view needs a run and a step");
  const fig::Theme& th = fig::theme_by_name(s.theme);
  fig::MemorySpec m = memory_spec(*s.run, *s.step, s.batch, s.lang);
  if (!s.answer.empty()) m.detail = s.answer;
  m.arrived = s.arrived;
  MemoryView v;
  v.figure.width = s.width;
  v.figure.height = s.height;
  v.figure.background = th.background;
  v.figure.theme = th.name;
  v.figure.title = s.step->name;
  const float pad = 12;
  v.layout = fig::add_memory_strips(v.figure, th, {pad, 0, s.width - 2 * pad, s.height - pad}, m);
  return v;
}

}  // namespace attnsim::app
