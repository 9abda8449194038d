// attnsim-cli trace: run one forward pass and print every step (or dump it).
#include <cstdio>
#include <fstream>

#include "commands.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/trace_json.h"
#include "options.h"
#include "table.h"

namespace attnsim::cli {

namespace {

struct TraceOptions {
  ModelOptions model;
  std::string dump;
  bool json = false;
};

std::string bytes_cell(const Step& s) {
  switch (s.kind) {
    case StepKind::View: return "0";
    case StepKind::Copy: return human_bytes(s.copied_bytes) + " copied";
    case StepKind::Skipped: return "";
    default: return s.new_bytes ? human_bytes(s.new_bytes) : "shared";
  }
}

void print_table(const MhaConfig& c, const ForwardResult& r) {
  std::printf("multi-head attention: B=%lld Tq=%lld Tk=%lld d_model=%lld h=%lld d_k=%lld  %s%s  mask=%s  bug=%s\n",
              (long long)c.batch, (long long)c.tq, (long long)c.tk, (long long)c.d_model,
              (long long)c.heads, (long long)c.head_dim(), c.self_attention ? "self" : "cross",
              c.bias ? "" : " no-bias", format_mask_spec(c.mask).c_str(), bug_name(c.bug));
  Table table({"step", "op", "shape", "strides", "kind", "bytes", "storage", "NaN", "-inf"});
  for (const Step& s : r.trace.steps) {
    if (s.skipped()) {
      table.add({s.name, s.op, "-", "-", "skipped", "", "", "", s.note.empty() ? "" : "(" + s.note + ")"});
      continue;
    }
    table.add({s.name, s.op, format_dims(s.out.shape()), format_dims(s.out.strides()),
               step_kind_name(s.kind), bytes_cell(s), "#" + std::to_string(s.storage_id),
               std::to_string(s.nan_count), std::to_string(s.neginf_count)});
  }
  table.print();
  const std::string first_nan = r.trace.first_nan_step();
  std::printf("held by the trace: %s (views cost nothing; each copy is held once)\n",
              format_bytes(r.trace.held_bytes()).c_str());
  if (!first_nan.empty()) std::printf("NaN first appears at: %s\n", first_nan.c_str());
  if (!r.error.empty()) std::printf("stopped: %s\n", r.error.c_str());
}

}  // namespace

Runner add_trace_command(CLI::App& app) {
  auto opts = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "run one forward pass and show every named step");
  add_model_options(*cmd, opts->model);
  cmd->add_option("--dump", opts->dump, "write DIR/<step>.npy for every step that ran and DIR/trace.json");
  cmd->add_flag("--json", opts->json, "print the trace as JSON");
  return [opts] {
    const Model m = build_model(opts->model);
    const ForwardResult r = forward(m.config, m.weights, m.inputs, backend_by_name(opts->model.backend));
    const nlohmann::json j = trace_to_json(m.config, r.trace);
    if (!opts->dump.empty())
      write_folder_atomically(opts->dump, [&](const std::string& dir) {
        dump_steps(r.trace, dir);
        std::ofstream out(dir + "/trace.json");
        out << j.dump(2) << '\n';
        if (!out) throw Error(opts->dump + ": cannot write trace.json");
      });
    if (opts->json) std::printf("%s\n", j.dump(2).c_str());
    else print_table(m.config, r);
    return 0;
  };
}

}  // namespace attnsim::cli
