// HfView: a Hugging Face model folder (GPT-2 or Llama family, src/model/text/hf_* and src/model/formats/hf_*) as the app shows
// it. The folder, the user's text as tokens with their byte ranges, the layer on screen and
// the heads knocked out; and what follows from them, recomputed as a task (tasks.h: a worker
// thread on the desktop, between frames in the browser) so the window keeps drawing:
//
//   plain pass      every layer's alpha; the chosen layer's whole trace (q_rot / k_rot under
//                   RoPE) when no head is out; top-5 next tokens; next-token loss
//   ablated pass    with the knocked-out heads' ctx zeroed: the chosen layer's trace, top-5,
//                   loss and its change
//   whole pass      whole_run.h: the logit lens, the direct logit attribution, the stream's
//                   norms, the last logits that the sampling chart reads
//   role scores     heads.h's scores of every layer × head on the user's tokens, and on
//                   repeated random sequences (BOS + r + r, once per folder)
//
// and decode: N tokens after the user's, greedy or at a temperature, through HfDecoder's KV
// caches. A bad folder, bad text or a bad setting throws Error (one line) and leaves the view
// as it was. No OpenGL: tested without a window.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "model/training/heads.h"
#include "model/experiments/hf_eval.h"
#include "model/formats/hf_model.h"
#include "model/formats/hf_text.h"
#include "views/sampling_view.h"
#include "views/session.h"
#include "views/tasks.h"
#include "views/whole_run.h"

namespace attnsim::app {

// One token of the input: its id, how it reads (a split UTF-8 byte as <0xEC>, a space as ·)
// and the bytes of the user's text it covers (empty for BOS, or for input given as ids).
struct HfToken {
  int32_t id = 0;
  std::string label;
  model::hf::Span span{0, 0};
};

// One recompute's results, immutable once made (shared with the panels).
struct HfRun {
  std::vector<int32_t> tokens;
  int64_t layer = 0;
  std::vector<model::HeadRef> ablated;           // knocked out together (zero ablation)
  Trace trace;                                   // layer `layer`'s steps: the ablated pass's when heads are out
  std::vector<model::hf::Prediction> top;        // top-5 after the last token, plain
  std::vector<model::hf::Prediction> top_ablated;
  double loss = std::numeric_limits<double>::quiet_NaN();          // next-token loss (nats); NaN for one token
  double loss_ablated = std::numeric_limits<double>::quiet_NaN();
  model::HeadTable own;                                   // role scores on the tokens (plain pass)
  std::shared_ptr<const model::HeadTable> repeated;       // on repeated random sequences
  model::HeadScores own_chance, repeated_chance;          // uniform attention's on the same tokens (head_names.h)
  std::shared_ptr<const WholeRun> whole;                  // the whole pass (plain): lens, DLA, norms, logits
  double compute_ms = 0;
  double delta() const { return loss_ablated - loss; }
};

struct HfDecoded {
  std::vector<int32_t> prompt, generated;
  double temperature = 0;  // 0 = greedy
  uint64_t seed = 0;
  std::string text;        // the generated tokens as text (or ids without a tokenizer)
  double ms = 0;
};

class HfView {
 public:
  HfView() = default;
  HfView(const HfView&) = delete;
  HfView& operator=(const HfView&) = delete;
  ~HfView();

  // Reads DIR (config.json, the safetensors, the tokenizer when there is one) after checking
  // that the weights and two passes fit under mem_limit (0 = default): refused with the
  // figures. Keeps the text when it fits the new model, else takes a default input; heads out
  // of the new model's range are dropped. Starts a recompute.
  void load(const std::string& dir, int64_t mem_limit = 0);
  bool loaded() const { return model_ != nullptr; }
  const std::string& dir() const { return dir_; }
  const model::hf::HfModel& model() const { return *model_; }
  const model::hf::HfConfig& config() const { return model_->config; }
  const model::hf::HfText& text_tools() const { return *text_; }
  bool has_tokenizer() const { return text_ && text_->tokenizer.has_value(); }
  int64_t predicted_bytes() const { return predicted_bytes_; }  // the load's prediction

  // The input. Each setter checks (the tokenizer, the vocabulary, the positions, memory),
  // then starts a recompute.
  void set_text(const std::string& text);
  void set_tokens(std::vector<int32_t> tokens);
  const std::string& text() const { return input_text_; }  // empty when given as ids
  const std::vector<HfToken>& tokens() const { return tokens_; }
  std::vector<int32_t> token_ids() const;

  void set_layer(int64_t layer);  // Error for a layer outside 0..layers-1
  int64_t layer() const { return layer_; }

  // Ablation (zero): each change starts a recompute.
  const std::vector<model::HeadRef>& ablated_heads() const { return ablated_; }
  bool is_ablated(model::HeadRef h) const;
  void toggle(model::HeadRef h);
  void set_ablated(std::vector<model::HeadRef> heads);  // Error for a head outside the model

  // Recompute: request() starts one (coalesced while one runs); poll() swaps in what finished,
  // true when a new run arrived (call once per frame); wait() blocks until nothing is pending.
  void request();
  bool poll();
  void wait();
  bool busy() const { return worker_.valid() || decoder_.valid(); }
  const std::shared_ptr<const HfRun>& run() const { return run_; }  // null before the first
  const std::string& error() const { return error_; }              // the last recompute's, or ""
  uint64_t revision() const { return revision_; }                  // bumped by each run swapped in

  // The layer's trace of the run on screen, as the pipeline, tensor and memory views read it.
  std::shared_ptr<RunData> run_data() const;

  // The token whose logit the direct logit attribution splits (-1: the model's top token):
  // Error outside the vocabulary; starts a recompute.
  void set_dla_token(int32_t token);
  // The sampling chart over the last run's logits: a control change recomputes only the
  // sampling steps, in the frame (sampling_view.h); a new run gives it new logits.
  SamplingView& sampling() { return sampling_; }
  const SamplingView& sampling() const { return sampling_; }

  // Decodes `steps` tokens after the input (temperature 0: greedy), as a task; poll() swaps
  // the result in. Error for steps < 1, past the model's positions, or a bad temperature.
  void decode(int64_t steps, double temperature, uint64_t seed);
  const std::shared_ptr<const HfDecoded>& decoded() const { return decoded_; }

 private:
  void set_input(std::vector<HfToken> tokens, std::string text);
  void launch();

  std::shared_ptr<const model::hf::HfModel> model_;
  std::string dir_;
  std::shared_ptr<const model::hf::HfText> text_;  // shared with a decode task
  int64_t predicted_bytes_ = 0;
  std::string input_text_;
  std::vector<HfToken> tokens_;
  int64_t layer_ = 0;
  std::vector<model::HeadRef> ablated_;
  int32_t dla_token_ = -1;
  SamplingView sampling_;
  std::shared_ptr<const model::HeadTable> repeated_;  // per folder, from its first run

  std::shared_ptr<const HfRun> run_;
  std::string error_;
  uint64_t revision_ = 0;
  uint64_t epoch_ = 0;  // bumped by load(): a run of the previous folder is dropped
  uint64_t worker_epoch_ = 0;
  Task<std::shared_ptr<const HfRun>> worker_;
  bool pending_ = false;
  std::shared_ptr<const HfDecoded> decoded_;
  Task<std::shared_ptr<const HfDecoded>> decoder_;
  uint64_t decoder_epoch_ = 0;
};

// A folder as the command line asks for it (--model DIR --text ... --layer L --ablate 1.2,0.3:
// empty text, layer -1 and empty ablate leave the defaults), its first run waited for. Throws
// Error (one line) for anything refused, the run included.
std::shared_ptr<HfView> open_hf_view(const std::string& dir, const std::string& text, int64_t layer,
                                     const std::string& ablate);

// The folders the app opens as a Hugging Face model: config.json and no model.json (an attnsim
// checkpoint). What else is missing (the safetensors) is the loader's one-line refusal.
bool is_hf_folder(const std::string& dir);

}  // namespace attnsim::app
