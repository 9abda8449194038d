// attnsim-cli lens: the logit lens and the direct logit attribution (model/lens.h) of a
// Hugging Face folder or an attnsim checkpoint, at one position.
#include <cstdio>
#include <limits>

#include "commands.h"
#include "engine/error.h"
#include "model/pass/lens.h"
#include "options.h"
#include "table.h"
#include "whole_input.h"

namespace attnsim::cli {

namespace {

constexpr const char* kConvention =
    "final norm frozen at its scale on the whole stream (TransformerLens): each part centred (LayerNorm), divided by "
    "the stream's std (LayerNorm) or rms (RMSNorm), times the norm's weight and the target's unembedding row; "
    "'bias' is the norm's bias and the unembedding bias";

std::string fixed(double v, int digits) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

}  // namespace

Runner add_lens_command(CLI::App& app) {
  struct Args {
    std::string dir, mem_limit, text = "the cat sat. the cat sat.";
    HfInput in;
    int64_t position = -1;
    int32_t target = -1;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "lens", "logit lens (the stream after each block, read through the final norm and the unembedding) and direct "
              "logit attribution (each head, MLP, embedding and bias's share of one logit)");
  cmd->add_option("--model", a->dir, "a Hugging Face folder or an attnsim checkpoint")->required()->check(not_empty());
  cmd->add_option("--tokens", a->in.tokens, "the input as token ids, e.g. 3,1,4")->check(not_empty());
  CLI::Option* text = cmd->add_option("--text", a->text, "the input as text (a folder's tokenizer; a checkpoint: one token "
                                                         "per character after BOS)")
                          ->excludes("--tokens");
  cmd->add_option("--position", a->position, "which position to read (default the last)")
      ->check(whole_number(0, std::numeric_limits<int32_t>::max()));
  cmd->add_option("--target", a->target, "the token whose probability and logit are followed (default the model's top token)")
      ->check(whole_number(0, std::numeric_limits<int32_t>::max()));
  cmd->add_option("--mem-limit", a->mem_limit, "refuse runs that need more (e.g. 2G)")->check(mem_limit_size());
  cmd->add_flag("--json", a->json, "JSON instead of tables");
  return [a, text] {
    HfInput in = a->in;
    if (text->count() > 0 || (in.tokens.empty() && !model::hf::is_hf_model_dir(a->dir))) in.text = a->text;
    const auto run = open_whole_run(a->dir, in, {}, a->mem_limit.empty() ? 0 : parse_size(a->mem_limit),
                                    "the logit lens (the whole pass, every step kept)");
    const model::WholeTrace w = model::whole_forward(run->pass, run->tokens);
    const model::LogitLens lens = model::logit_lens(run->pass, w, a->position, a->target);
    const model::LogitAttribution dla = model::attribute_logit(run->pass, w, lens.position, lens.target);
    if (a->json) {
      nlohmann::json j;
      j["position"] = lens.position;
      j["target"] = lens.target;
      j["target_label"] = run->label(lens.target);
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& r : lens.rows)
        rows.push_back({{"stage", r.stage}, {"top", r.top}, {"top_label", run->label(r.top)}, {"top_prob", r.top_prob},
                        {"target_prob", r.target_prob}});
      j["lens"] = rows;
      nlohmann::json parts = nlohmann::json::array();
      for (const auto& p : dla.parts) parts.push_back({{"name", p.name}, {"value", p.value}});
      j["attribution"] = {{"token", dla.token}, {"logit", dla.logit}, {"sum", dla.sum()}, {"parts", parts},
                          {"convention", kConvention}};
      std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return 0;
    }
    std::printf("logit lens at position %lld, final answer %s (id %d)\n", (long long)lens.position,
                run->label(lens.target).c_str(), lens.target);
    Table t({"after", "top token", "p(top)", "p(answer)"});
    for (const auto& r : lens.rows)
      t.add({r.stage, run->label(r.top) + " (" + std::to_string(r.top) + ")", fixed(r.top_prob, 4), fixed(r.target_prob, 4)});
    t.print();
    std::printf("\ndirect logit attribution of %s (id %d): logit %.5f = sum of the parts %.5f\n", run->label(dla.token).c_str(),
                dla.token, dla.logit, dla.sum());
    Table d({"part", "contribution"});
    for (const auto& p : dla.parts) d.add({p.name, fixed(p.value, 5)});
    d.print();
    std::printf("convention: %s\n", kConvention);
    return 0;
  };
}

}  // namespace attnsim::cli
