// Files the user hands the app. See open_files.h.
#include "app/open_files.h"

#include <unistd.h>

#include <filesystem>
#include <vector>

#include "app/app.h"
#include "app/lesson_ui.h"
#include "engine/error.h"
#include "engine/npy.h"
#include "engine/zip_extract.h"
#include "views/hf_view.h"
#include "views/i18n.h"

namespace attnsim::app {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The run on screen with the user's weights: the shape of W_Q fixes d_model; the heads stay
// when they divide it.
void open_weights(App& app, const std::string& dir) {
  Scenario& s = app.session.scenario();
  const NpyInfo q = read_npy_info((fs::path(dir) / "W_Q.weight.npy").string());
  if (q.shape.size() != 2 || q.shape[0] != q.shape[1])
    throw Error(dir + "/W_Q.weight.npy: expected a square (d, d) weight, got " + format_dims(q.shape));
  MhaConfig c = s.config;
  c.d_model = q.shape[0];
  c.bias = fs::exists(fs::path(dir) / "W_Q.bias.npy");
  validate(c);  // throws: d_model not divisible by the heads, ...
  auto weights = std::make_shared<const MhaWeights>(load_weights(dir, c.d_model, c.bias, c.kv_dim()));
  if (s.user_input.defined() && s.user_input.size(2) != c.d_model)
    throw Error("the weights are " + std::to_string(c.d_model) + " wide but the input you opened is " +
                std::to_string(s.user_input.size(2)));
  s.config = c;
  s.user_weights = std::move(weights);
  app.session.request();
  app.show_banner(std::string(tr("Opened")) + ": " + dir, false);
}

// A (B, T, d) input for self-attention; d must match the weights on screen.
void open_input(App& app, const std::string& path) {
  Tensor x = read_npy(path);  // throws naming the file and the reason
  if (x.dtype() != DType::F32 || x.dim() != 3)
    throw Error(path + ": an input must be float32 of shape (B, T, d), got " + format_dims(x.shape()));
  Scenario& s = app.session.scenario();
  MhaConfig c = s.config;
  c.batch = x.size(0);
  c.tq = c.tk = x.size(1);
  c.self_attention = true;
  if (s.user_weights && x.size(2) != c.d_model)
    throw Error(path + ": d = " + std::to_string(x.size(2)) + " does not match the weights you opened (d_model " +
                std::to_string(c.d_model) + ")");
  c.d_model = x.size(2);
  validate(c);
  check_inputs(c, MhaInputs{x, x, x, {}, {}});
  if (predict_trace_bytes(c) > effective_mem_limit(c))
    throw Error(path + ": this input's trace would not fit in memory");
  s.config = c;
  s.user_input = std::move(x);
  s.sentences.clear();
  s.key_sentences.clear();
  app.session.edits().clear();
  app.session.request();
  app.show_banner(std::string(tr("Opened")) + ": " + path, false);
}

// What one drop may still open: zips inside zips and folders of one entry inside folders.
struct OpenBudget {
  UnpackBudget zips;
  int folders_left;
};

void open_path(App& app, const std::string& path, OpenBudget& budget);

// A zipped folder: unpacked into a fresh scratch folder (kept while the app runs: a checkpoint
// is read from it again when its scenario reloads), then opened as that folder.
void open_zip(App& app, const std::string& path, OpenBudget& budget) {
  static int count = 0;
  const fs::path dest = fs::temp_directory_path() / ("attnsim-open-" + std::to_string(::getpid())) /
                        (std::to_string(++count) + "-" + fs::path(path).stem().string());
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  budget.zips.extract(path, dest.string());  // throws naming the archive and the entry
  open_path(app, dest.string(), budget);
}

void open_path(App& app, const std::string& path, OpenBudget& budget) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(fs::path(path) / "model.json", ec) || is_hf_folder(path)) {
      app_load_scenario(app, "model", path);  // throws naming the file when it does not load
      app.show_banner(std::string(tr("Opened")) + ": " + path, false);
      return;
    }
    if (fs::exists(fs::path(path) / "W_Q.weight.npy", ec)) return open_weights(app, path);
    std::vector<fs::path> entries;  // a folder holding one file or folder (a zip's top folder): that
    for (const auto& e : fs::directory_iterator(path, ec)) entries.push_back(e.path());
    if (entries.size() == 1) {
      if (--budget.folders_left < 0)
        throw Error(path + ": folders of one entry nested deeper than attnsim follows; open the inner folder itself");
      return open_path(app, entries[0].string(), budget);
    }
    throw Error(path + ": a folder to open holds model.json (a checkpoint), config.json + model.safetensors (a Hugging "
                "Face model) or W_Q.weight.npy (weights)");
  }
  const std::string name = fs::path(path).filename().string();
  if (ends_with(name, ".toml")) {
    open_lesson_file(app, path);  // its own banner when it does not load
    return;
  }
  if (ends_with(name, ".zip")) return open_zip(app, path, budget);
  if (ends_with(name, ".npy")) {
    if (name.rfind("W_", 0) == 0) return open_weights(app, fs::path(path).parent_path().string());
    return open_input(app, path);
  }
  throw Error(name + ": attnsim opens .npy inputs and weights, .toml lessons, checkpoint and Hugging Face model folders "
                     "(or a .zip of one)");
}

}  // namespace

void open_user_path(App& app, const std::string& path) {
  // Checkpoints and lessons are MBs; GPT-2 small's model.safetensors is 548 MB. A zipped
  // folder holding one zipped folder is as deep as anyone packs by hand.
  OpenBudget budget{UnpackBudget{kMaxZipNesting, kMaxUnpackedBytes}, kMaxFolderNesting};
  open_path(app, path, budget);
}

}  // namespace attnsim::app
