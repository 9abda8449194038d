// Lesson 03 states which copies PyTorch makes in the article's forward (issue 38): the
// engine's bmm_copy.* and its one contiguous() copy must be the copies PyTorch 1.13's profiler
// recorded, clone for clone (tests/golden/torch_copies.json, made by tools/torch_copies.py).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "engine/read_file.h"
#include "lessons/lesson.h"
#include "lessons/quantity.h"

using namespace attnsim;
using namespace attnsim::lessons;

namespace {

double value(Evaluator& eval, const Settings& s, const std::string& quantity) {
  Claim c;
  c.quantity = quantity;
  return std::get<double>(eval.evaluate(c, s));
}

}  // namespace

TEST_CASE("PyTorch's clones in the article's forward are the engine's bmm_copy and contiguous copies",
          "[lessons][torch]") {
  const auto j = nlohmann::json::parse(
      read_text_file(std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/torch_copies.json", 1 << 20));
  Evaluator eval;
  int batches = 0;
  for (const auto& run : j.at("runs")) {
    Settings s;
    s.preset = "article";
    s.batch = run.at("batch").get<int64_t>();
    s.tq = j.at("tq").get<int64_t>();
    s.d_model = j.at("d_model").get<int64_t>();
    s.heads = j.at("heads").get<int64_t>();
    std::map<std::string, double> torch;  // step -> bytes PyTorch cloned
    for (const auto& c : run.at("clones")) torch[c.at("step").get<std::string>()] += c.at("bytes").get<double>();
    // What the engine predicts for each operand PyTorch's matmul folds, and the merge copy
    // both make. A step PyTorch did not clone must be a view in the engine too.
    for (const std::string step : {"q_heads", "k_heads", "v_heads"}) {
      INFO("batch " << *s.batch << ", " << step);
      CHECK(value(eval, s, "bmm_copy." + step) == torch[step]);
    }
    CHECK(value(eval, s, "trace.ctx_contiguous.copied_bytes") == torch["ctx_transposed"]);
    ++batches;
  }
  CHECK(batches == 2);
  // B = 1: folding a size-1 batch axis is a view, so only the merge copies; B = 4: three more.
  CHECK(j.at("runs").at(0).at("clones").size() == 1);
  CHECK(j.at("runs").at(1).at("clones").size() == 4);
}
