// The model panel's Overview tab in a real window under xvfb-run, at 1280x720 on the language
// model the model scenario opens:
//   - a click on a block opens it in place: the geometry gets the open block's title and its
//     steps, in run order down the block, the block wider than before and the others narrower
//   - the block is shown in the pipeline, tensor and memory views (the step there: its attention
//     weights)
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

const std::string kApp = ATTNSIM_APP;
const std::string kOut = ATTNSIM_TEST_OUT;

int run(const std::string& args) { return std::system((kApp + " " + args + " > /dev/null").c_str()); }

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("Overview tab: a click on a block opens its steps in place, in run order") {
  const std::string args = " --scenario model --action open-overview --window 1280x720";
  const std::string png = kOut + "/overview-open.png", geo = kOut + "/overview-open.json";
  REQUIRE(run("--export " + png + args + " --geometry " + geo) == 0);
  const nlohmann::json closed = read_json(geo);
  REQUIRE(closed.contains("overview_block_2"));
  CHECK_FALSE(closed.contains("overview_open"));
  CHECK_FALSE(closed.contains("overview_step_q_proj"));
  const auto& b = closed["overview_block_2"];
  const float w0 = b[2].get<float>();
  // A point in block 2 under its maps (its MLP), which no map's button covers.
  const int cx = static_cast<int>(b[0].get<float>() + w0 / 2), cy = static_cast<int>(b[1].get<float>() + b[3].get<float>() * 0.8f);
  REQUIRE(run("--export " + png + args + " --click " + std::to_string(cx) + "," + std::to_string(cy) + " --geometry " + geo) == 0);
  const nlohmann::json open = read_json(geo);
  REQUIRE(open.contains("overview_open"));
  CHECK(open["overview_block_2"][2].get<float>() > 2 * w0);
  CHECK(open["overview_block_0"][2].get<float>() < w0);
  CHECK(open["step"] == "alpha");
  // Q/K/V -> the heads -> W_O -> the add -> the MLP -> the add, top to bottom inside the block.
  float y = open["overview_open"][1].get<float>();
  const float left = open["overview_block_2"][0].get<float>(), right = left + open["overview_block_2"][2].get<float>();
  for (const char* step : {"norm_attn", "q_proj", "k_proj", "v_proj", "alpha", "out", "resid_attn", "norm_mlp", "mlp_up",
                           "mlp_down", "resid_mlp"}) {
    INFO(step);
    const std::string key = std::string("overview_step_") + step;
    REQUIRE(open.contains(key));
    const auto& r = open[key];
    CHECK(r[1].get<float>() > y);
    CHECK(r[0].get<float>() >= left);
    CHECK(r[0].get<float>() + r[2].get<float>() <= right + 0.5f);
    y = r[1].get<float>();
  }
}
