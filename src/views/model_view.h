// ModelView: the trained model the app shows. A checkpoint, the sequence on screen, the heads
// knocked out, and what follows from them: two forward passes (as trained, and with the
// ablation), their loss and accuracy per part, the top-5 predictions at every position, each
// layer's 25-step trace. No OpenGL: tested without a window.
//
// A checkpoint folder that holds tokenizer.json is a language model (the WordNet runs): typed
// text goes through that tokenizer, the sequence starts with its "<|endoftext|>" (the token
// every training window starts with) instead of BOS 0, every label is the tokenizer's, and the
// view also measures the loss on a held-out text sample (HeldoutLoss) as trained and with the
// knocked-out heads. Without tokenizer.json: the toy alphabet (model/tokenizer.h), as before.
//
// Parts of a typed sequence (the task's own parts need its generator; a typed one has none):
//   position t predicts tokens[t+1]; its part is
//     repeat  when tokens[t] already occurred at some 1 <= j < t: an induction head can look up
//             what followed it (on BOS + r + r: every position of the second copy)
//     first   otherwise (t >= 1): nothing earlier says what comes next
//   t = 0 (BOS) and the last position are not scored.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "views/head_names.h"
#include "views/sampling_view.h"
#include "views/session.h"
#include "views/whole_run.h"
#include "model/formats/checkpoint_text.h"
#include "model/training/heads.h"
#include "model/text/hf_tokenizer.h"
#include "model/pass/forward.h"
#include "model/training/text_task.h"
#include "model/pass/sampling.h"

namespace attnsim::app {

inline constexpr int kTopTokens = 5;  // predictions listed per position

struct Prediction {
  int32_t target = -1;                      // tokens[t+1], -1 = not scored
  uint8_t part = 0;                         // model::kFirst / kRepeat / kOther
  std::array<int32_t, kTopTokens> top{};    // most likely next tokens, most likely first
  std::array<float, kTopTokens> prob{};     // their softmax probabilities
  bool correct() const { return target >= 0 && top[0] == target; }
};

// One forward pass over the sequence on screen.
struct ModelRun {
  model::LossStats stats;                // parts indexed by model::Part (kFirst, kRepeat)
  std::vector<Prediction> predictions;   // one per position
  std::vector<Trace> traces;             // per layer: the engine's 25 steps
  std::vector<Tensor> contributions;     // per layer (1,h,T,T): each row's shares of ‖α·W_O^h v‖
                                         // (model::contribution_pattern)
  model::HeadTable patterns;             // role scores of each head on this sequence alone
  model::HeadScores chance;              // uniform attention's scores on it (head_names.h)
};

// A language model's mean next-token loss (nats per token) on the held-out sample: its lines
// tokenized with EOS before each, read as kHeldoutWindows windows of seq_len tokens from line
// starts (model::text_windows, as training's held-out evaluation reads its split). Small
// enough to recompute on every click of a head.
struct HeldoutLoss {
  bool measured = false;  // false: not a language model, or the sample could not be read (why)
  std::string why;        // when a language model has no measurement: one line saying why
  double trained = 0;     // as trained
  double ablated = 0;     // with the knocked-out heads (== trained when none)
  int64_t tokens = 0;     // targets scored
  int64_t windows = 0;
};
inline constexpr int64_t kHeldoutWindows = 8;

class ModelView {
 public:
  // Loads a checkpoint folder; throws Error (one line naming the file). On failure the view
  // keeps what it had.
  // `later`: the two measurements no first view draws (the mean-ablation means and the held-out
  // loss, about three 1,000-token passes: 1.1 s of the page's 1.65 s load) wait for settle(),
  // which the app calls once the first frames are drawn.
  void load(const std::string& dir, bool later = false);
  bool settled() const { return settled_; }
  void settle();  // measures what load(dir, true) left; no-op when settled
  bool loaded() const { return loaded_; }
  const std::string& dir() const { return dir_; }
  int64_t step() const { return step_; }  // training step of the checkpoint (model.json)
  const model::Model& model() const { return model_; }
  // A language model: the folder held tokenizer.json (null otherwise).
  bool text_model() const { return tokenizer_ != nullptr; }
  const model::hf::Tokenizer* tokenizer() const { return tokenizer_.get(); }
  // The token every sequence starts with: the tokenizer's "<|endoftext|>", else BOS 0.
  int32_t start_token() const { return start_token_; }
  // Every label the model view draws (grid, tokens, predictions, traces, slides): the
  // tokenizer's token_label, else the toy alphabet's. "#id" for an id that is not a token.
  std::string label(int32_t id) const;
  std::function<std::string(int32_t)> labeller() const;  // label() that outlives a reload

  // The held-out text sample a language model is measured on; read by the next load().
  void set_heldout_path(std::string path) { heldout_path_ = std::move(path); }
  const std::string& heldout_path() const { return heldout_path_; }
  const HeldoutLoss& heldout() const { return heldout_; }
  // The held-out windows heldout() is measured on (empty batch when there are none).
  const model::Batch& heldout_batch() const { return heldout_batch_; }
  // Role scores on the standard scoring batch: what `attnsim-cli heads` prints; the colour of
  // each head's badge (its text names the pattern on the sequence on screen: head_names.h).
  // A language model's: on held-out lines repeated (EOS + r + r, model::repeated_text).
  const model::HeadTable& roles() const { return roles_; }
  // Uniform attention's scores on the same batch: every head's chance (head_names.h).
  const model::HeadScores& roles_chance() const { return roles_chance_; }
  // The head's strongest pattern on that batch (its own, whatever the sequence on screen).
  HeadName head_name(int64_t layer, int64_t head) const;
  std::string role(int64_t layer, int64_t head) const;
  std::vector<model::HeadRef> heads_with_role(const std::string& role) const;

  // The saved checkpoints of this model's run: RUN/checkpoints/step-NNNNNN, oldest first,
  // then RUN itself (the final model); RUN is the loaded folder, or the run it is a step of.
  // A run that kept no checkpoints is RUN alone (its log is still the Training tab's).
  std::vector<std::string> timeline() const;

  // The sequence (start_token() first). Each setter recomputes; throws Error on bad input.
  const std::vector<int32_t>& tokens() const { return tokens_; }
  std::string text() const;  // the sequence without its start token, decoded
  void set_text(const std::string& text);  // the start token, then the text's tokens
  void set_tokens(std::vector<int32_t> tokens);
  void repeated_random(int64_t repeat, uint64_t seed);  // start token + r + r
  // One training sequence; a language model's: one held-out line (the seed picks which).
  void task_example(uint64_t seed);
  // Appends up to `steps` tokens chosen by the model (model/generate.h: greedy at temperature
  // 0, else a seeded draw), stopping after a language model's end-of-text token or at seq_len.
  void decode(int64_t steps, const model::SamplingOptions& options);
  static const std::vector<std::string>& sentences();    // default English sentences

  // Ablation. Each change recomputes the ablated pass.
  const std::vector<model::HeadRef>& ablated_heads() const { return ablation_.heads; }
  bool is_ablated(model::HeadRef h) const;
  void toggle(model::HeadRef h);
  void set_ablated(std::vector<model::HeadRef> heads);
  bool mean_ablation() const { return ablation_.mean; }
  void set_mean_ablation(bool mean);

  // What the head grid draws in each cell: alpha (where the weight goes), or each position's
  // share of what the head writes, ‖α·W_O^h v‖ (ModelRun::contributions). Bumps revision().
  bool show_contribution() const { return show_contribution_; }
  void set_show_contribution(bool on);

  const ModelRun& base() const { return base_; }      // as trained
  const ModelRun& shown() const { return ablation_.heads.empty() ? base_ : ablated_; }
  const ModelRun& ablated() const { return shown(); }
  uint64_t revision() const { return revision_; }     // bumped by every recompute
  // Names the weights: a new one for every load(), kept by copies (caches key on it; a
  // folder's name is not enough, a new run may write the same folder).
  uint64_t load_id() const { return load_id_; }
  // The last recompute: both passes after a new sequence or checkpoint; after a change of
  // the ablation only the ablated pass (the one as trained has not changed).
  double compute_ms() const { return compute_ms_; }

  // Layer l's trace of the run on screen, as the pipeline, tensor and memory views read it.
  std::shared_ptr<RunData> run_data(int64_t layer) const;

  // The whole pass of the sequence as trained (whole_run.h): the logit lens, the direct logit
  // attribution of dla_token() (-1: the model's top token), the stream's norms. Recomputed
  // with the sequence or the checkpoint, not with the ablation.
  const WholeRun& whole() const { return whole_; }
  int32_t dla_token() const { return dla_token_; }
  void set_dla_token(int32_t token);  // Error for a token outside the vocabulary; -1: the top one
  // The sampling chart over whole().last_logits: a control change recomputes only the
  // sampling steps (sampling_view.h).
  SamplingView& sampling() { return sampling_; }
  const SamplingView& sampling() const { return sampling_; }

 private:
  void recompute(bool sequence_changed = true);
  void recompute_whole();
  ModelRun run(const model::Ablation* ablation) const;
  std::vector<std::string> list_timeline() const;
  void read_heldout(std::optional<model::Batch>* repeated);
  model::CheckpointText text_rule() const;  // how this model's ids read as text
  void measure_heldout(bool trained_too);

  bool loaded_ = false;
  std::string dir_;
  int64_t step_ = 0;
  model::Model model_;
  std::shared_ptr<const model::hf::Tokenizer> tokenizer_;
  int32_t start_token_ = 0;
  std::string heldout_path_ = model::heldout_sample_path();
  model::Batch heldout_batch_;  // a language model's held-out windows; empty when none
  std::vector<std::vector<int32_t>> heldout_lines_;  // EOS + each held-out line (task_example)
  HeldoutLoss heldout_;
  model::HeadTable roles_;
  model::HeadScores roles_chance_;
  std::vector<std::vector<std::vector<float>>> means_;
  std::vector<int32_t> tokens_;
  model::Ablation ablation_;
  bool show_contribution_ = false;
  ModelRun base_, ablated_;
  WholeRun whole_;
  int32_t dla_token_ = -1;
  SamplingView sampling_;
  uint64_t revision_ = 0;
  uint64_t load_id_ = 0;
  bool settled_ = true;
  double compute_ms_ = 0;
  mutable std::string timeline_dir_;  // timeline(): the last listing and when it was made
  mutable std::chrono::steady_clock::time_point timeline_at_;
  mutable std::vector<std::string> timeline_;
};

// True for the scenarios that open the trained model instead of an engine scenario: "model",
// "model-ablate-induction" (every head labelled induction knocked out) and "start" (the
// window's start view over the language model).
bool is_model_scenario(const std::string& name);

// The folder of the shipped toy checkpoint (assets/models/induction in the source tree), or the
// ATTNSIM_MODEL environment variable when set: what decode scenarios and exports run on.
std::string default_model_dir();
// The folder the model view opens when nothing names one (the app's and the page's model
// scenario): the language model, assets/models/wordnet-lm-s1, or ATTNSIM_MODEL when set.
std::string start_model_dir();


// Parts of a sequence's targets by the rule above.
std::vector<uint8_t> sequence_parts(const std::vector<int32_t>& tokens);

}  // namespace attnsim::app
