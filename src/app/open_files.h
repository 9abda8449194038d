// Files the user hands the app: dropped on the window (desktop and browser) or picked with
// the page's file input. Each path is taken for what it is:
//   a folder with model.json              a checkpoint: the model scenario opens it
//   a folder with config.json             a Hugging Face model (config.json, model.safetensors,
//                                         tokenizer.json or vocab.json + merges.txt): the
//                                         model scenario opens it in the Hugging Face panel
//   a folder with W_Q.weight.npy ...      weights (torch.nn.Linear layout) for the run on screen
//   a .toml file                          a lesson: opened in the lesson panel
//   W_Q.weight.npy (or any W_*.npy)       its folder's weights, as above
//   any other .npy                        a (B, T, d) float32 input for self-attention
//   a .zip of any of these                unpacked into a scratch folder (engine/zip_extract.h);
//                                         a zip in it is opened too, at most kMaxZipNesting
//                                         deep and kMaxUnpackedBytes over every level
// Anything the engine refuses (a malformed .npy, a shape that does not fit, a broken
// checkpoint, a config.json that lies) is one banner; the run on screen stays as it was.
#pragma once

#include <cstdint>
#include <string>

namespace attnsim::app {

struct App;

inline constexpr int kMaxZipNesting = 2;
inline constexpr int kMaxFolderNesting = 16;
inline constexpr int64_t kMaxUnpackedBytes = int64_t{1} << 30;

void open_user_path(App& app, const std::string& path);

}  // namespace attnsim::app
