#include "whole_input.h"

#include "engine/checked.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "model/formats/checkpoint.h"
#include "model/pass/whole_models.h"
#include "model/training/memory.h"
#include "model/text/tokenizer.h"

namespace attnsim::cli {

std::unique_ptr<WholeRun> open_whole_run(const std::string& dir, const HfInput& in, const model::SamplingOptions& sampling,
                                         int64_t mem_limit, const std::string& what) {
  auto run = std::make_unique<WholeRun>();
  if (model::hf::is_hf_model_dir(dir)) {
    const model::hf::HfConfig c = model::hf::read_hf_config(dir);
    run->tokens = hf_input_tokens(in, dir, c);
    model::validate_sampling(sampling, c.vocab);
    const int64_t T = static_cast<int64_t>(run->tokens.size());
    const int64_t need = model::predict_whole_bytes({c.layers, c.d_model, c.d_ff, c.vocab}, model::hf::hf_attention_config(c, T));
    run->hf.emplace(model::hf::load_hf_checked(dir, need, mem_limit, what));
    run->pass = model::pass_model(*run->hf);
    auto text = std::make_shared<model::hf::HfText>(model::hf::open_hf_text(dir, false));
    run->label = [text](int32_t id) { return text->label(id); };
    return run;
  }
  const model::ModelConfig c = model::read_checkpoint_header(dir).config;
  run->tokens = in.tokens.empty() ? model::encode(in.text, c.vocab) : parse_token_ids(in.tokens);
  model::check_token_ids(run->tokens, c.vocab, c.seq_len);
  model::validate_sampling(sampling, c.vocab);
  const int64_t T = static_cast<int64_t>(run->tokens.size());
  const int64_t need = checked_add(model::checkpoint_bytes(c),
                                   model::predict_whole_bytes({c.layers, c.d_model, c.mlp ? c.mlp_dim() : 0, c.vocab},
                                                              model::attention_config(c, 1, T)));
  check_fits(need, mem_limit, what, "fewer tokens");
  run->toy.emplace(model::load_checkpoint(dir));
  run->pass = model::pass_model(*run->toy);
  run->label = [](int32_t id) { return "\"" + model::decode({id}) + "\""; };
  return run;
}

}  // namespace attnsim::cli
