// trace --whole: every step of the whole pass (whole_commands.h), printed, as JSON, or dumped
// as OUT/<step>.npy (model level) and OUT/layer_<L>/<step>.npy (each block).
#include <cstdio>
#include <filesystem>

#include "engine/atomic_file.h"
#include "engine/cost.h"
#include "engine/trace_json.h"
#include "staged_out.h"
#include "table.h"
#include "whole_commands.h"
#include "whole_input.h"

namespace attnsim::cli {

namespace {

nlohmann::json whole_json(const model::WholeTrace& w) {
  nlohmann::json j = trace_to_json(w.attention, w.model);  // config: one block's attention
  nlohmann::json layers = nlohmann::json::array();
  for (const Trace& t : w.blocks) layers.push_back(trace_to_json(w.attention, t)["steps"]);
  j["layers"] = layers;
  return j;
}

void add_rows(Table& table, const std::string& prefix, const Trace& t, size_t first, size_t last) {
  for (size_t i = first; i < last; ++i) {
    const Step& s = t.steps[i];
    if (s.skipped()) table.add({prefix + s.name, s.op, "-", "-", "skipped", "", "(" + s.note + ")"});
    else table.add({prefix + s.name, s.op, format_dims(s.out.shape()), step_kind_name(s.kind),
                    s.kind == StepKind::View ? "0" : s.kind == StepKind::Input ? "shared" : human_bytes(s.new_bytes), std::to_string(s.nan_count),
                    std::to_string(s.neginf_count)});
  }
}

}  // namespace

int run_whole_trace(const WholeTraceArgs& a) {
  if (!a.dump.empty()) check_writable_folder(a.dump, a.force);  // before the work, not after it
  const auto run = open_whole_run(a.model, a.in, a.sampling, a.mem_limit, "a whole-pass trace (every step kept)");
  const model::WholeTrace w = model::whole_forward(run->pass, run->tokens, a.sampling);
  const nlohmann::json j = whole_json(w);
  if (!a.dump.empty())
    write_folder_atomically(a.dump, [&](const std::string& dir) {
      dump_steps(w.model, dir);
      for (size_t l = 0; l < w.blocks.size(); ++l) {
        const std::string ld = dir + "/layer_" + std::to_string(l);
        std::filesystem::create_directories(ld);
        dump_steps(w.blocks[l], ld);
      }
      write_file_atomically(dir + "/trace.json", j.dump(2) + "\n");
    }, a.force);
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  const model::PassModel& m = run->pass;
  std::printf("whole pass: %s, %lld layers, d_model=%lld, vocab %lld, %zu tokens\n", m.family.c_str(), (long long)m.layers,
              (long long)m.d_model, (long long)m.vocab, run->tokens.size());
  Table table({"step", "op", "shape", "kind", "bytes", "NaN", "-inf"});
  const size_t embed_steps = model::kEmbedSteps.size();
  add_rows(table, "", w.model, 0, embed_steps);
  int64_t held = w.model.held_bytes();
  for (size_t l = 0; l < w.blocks.size(); ++l) {
    add_rows(table, "layer_" + std::to_string(l) + "/", w.blocks[l], 0, w.blocks[l].steps.size());
    held += w.blocks[l].held_bytes();
  }
  add_rows(table, "", w.model, embed_steps, w.model.steps.size());
  table.print();
  const int32_t next = static_cast<int32_t>(w.model.at("next_token").out.f32()[0]);
  std::printf("next token: %s (id %d)\nheld by the traces: %s\n", run->label(next).c_str(), next, format_bytes(held).c_str());
  return 0;
}

}  // namespace attnsim::cli
