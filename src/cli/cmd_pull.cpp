// attnsim-cli pull ORG/NAME[@REV]: a model from the Hugging Face Hub into the cache, without
// opening it (hub.h's pull_model). Exit 0 only when every file is in snapshots/COMMIT/,
// verified; the last line printed is that folder, for scripts:
//   openai-community/gpt2: commit 607a30d7..., 5 files, 523 MiB (523 MiB fetched in 61.2 s, 8.55 MiB/s)
//   /home/me/.cache/huggingface/hub/models--openai-community--gpt2/snapshots/607a30d7...
// A model without a tokenizer is pulled too (a local folder without one opens on token ids),
// with a line before the folder that says so.
#include <cstdio>

#include "commands.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "hub/hub.h"
#include "hub/model_files.h"
#include "model_name.h"
#include "options.h"

namespace attnsim::cli {

Runner add_pull_command(CLI::App& app) {
  struct Args {
    std::string name, mem_limit;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("pull", "download a model from the Hugging Face Hub into the cache (HF_HUB_CACHE), without opening it");
  cmd->add_option("name", a->name, "ORG/NAME[@REVISION], e.g. openai-community/gpt2")->required()->check(not_empty());
  cmd->add_option("--mem-limit", a->mem_limit, "refuse, before any weight byte, models that need more to load (e.g. 8G)")
      ->check(mem_limit_size());
  return [a] {
    const std::optional<hub::RepoRef> ref = hub::parse_repo_ref(a->name);
    if (!ref) throw Error("'" + one_line(a->name) + "' is not a model name on the Hub (ORG/NAME[@REVISION], e.g. openai-community/gpt2)");
    const std::string name = hub::display_name(*ref);
    ProgressLine line;
    const hub::Resolved r = hub::pull_model(*ref, cli_hub_options(name, a->mem_limit.empty() ? 0 : parse_size(a->mem_limit), line));
    line.end();
    if (r.source == hub::Source::Cache) {
      std::printf("%s: commit %s, in the cache (HF_HUB_OFFLINE: the Hub was not asked)\n", name.c_str(), r.commit.c_str());
    } else {
      const double rate = r.seconds > 0 ? r.fetched / r.seconds : 0;
      std::printf("%s: commit %s, %d files, %s (%s fetched in %.1f s, %s/s)\n", name.c_str(), r.commit.c_str(), r.files,
                  human_bytes(r.bytes).c_str(), human_bytes(r.fetched).c_str(), r.seconds,
                  human_bytes(static_cast<int64_t>(rate)).c_str());
    }
    if (!hub::folder_files(r.dir).tokenizer)
      std::printf("%s has no tokenizer (tokenizer.json, or vocab.json + merges.txt): give its input as token ids "
                  "(--tokens), not --text\n", name.c_str());
    std::printf("%s\n", r.dir.c_str());
    return 0;
  };
}

}  // namespace attnsim::cli
