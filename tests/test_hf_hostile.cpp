// Hostile Hugging Face folders: safetensors headers and config.json files that lie. Each is
// one Error naming the problem, raised from the headers before any tensor byte is read.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "engine/error.h"
#include "model/hf_config.h"
#include "model/hf_model.h"
#include "model/hf_safetensors.h"

using namespace attnsim;
using namespace attnsim::model::hf;
namespace fs = std::filesystem;

namespace {

// 8-byte little-endian length (`claimed`, or the header's own), the header, `data` bytes.
std::string safetensors_bytes(const std::string& header, size_t data, uint64_t claimed = 0) {
  const uint64_t n = claimed ? claimed : header.size();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + std::string(data, '\0');
}

std::string parse_error(const std::string& bytes) {
  try {
    SafetensorsSet::parse_header(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                 static_cast<int64_t>(bytes.size()), "m.safetensors");
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string config_error(const std::string& json) {
  try {
    parse_hf_config(nlohmann::json::parse(json), "config.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("safetensors headers that lie are refused with the numbers") {
  const std::string one = R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  CHECK(parse_error(safetensors_bytes(one, 16)) == "(accepted)");
  CHECK_THAT(parse_error(safetensors_bytes(one, 16, uint64_t{1} << 62)),
             Catch::Contains("header length 4611686018427387904 runs past the end of the file"));
  CHECK_THAT(parse_error(safetensors_bytes(one, 16, one.size() + 17)), Catch::Contains("runs past the end"));
  CHECK_THAT(parse_error("abc"), Catch::Contains("too short for a safetensors file"));
  CHECK_THAT(parse_error(safetensors_bytes(one, 8)), Catch::Contains("past the end of the data (8 bytes)"));
  CHECK_THAT(parse_error(safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", 16)),
             Catch::Contains("hold 12 bytes but F32 (2, 2) needs 16"));
  CHECK_THAT(parse_error(safetensors_bytes(R"({"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,16]}})", 16)),
             Catch::Contains("needs 8"));
  CHECK_THAT(parse_error(safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                           R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 16)),
             Catch::Contains("'a' and 'b' overlap"));
  CHECK_THAT(parse_error(safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 16)),
             Catch::Contains("begin after end"));
  CHECK_THAT(parse_error(safetensors_bytes(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 16)),
             Catch::Contains("negative"));
  CHECK_THAT(parse_error(safetensors_bytes(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 16)),
             Catch::Contains("does not fit in 64 bits"));
  CHECK_THAT(parse_error(safetensors_bytes(R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", 16)),
             Catch::Contains("unknown dtype 'Q4'"));
  CHECK_THAT(parse_error(safetensors_bytes("[1]", 0)), Catch::Contains("must be a JSON object"));
  CHECK_THAT(parse_error(safetensors_bytes(std::string(100000, '[') + std::string(100000, ']'), 0)),
             Catch::Contains("nested more than 128 levels"));
}

TEST_CASE("a non-finite weight is an Error naming the tensor and the element") {
  const fs::path d = fs::temp_directory_path() / ("attnsim-st-nan-" + std::to_string(getpid()));
  fs::create_directories(d);
  std::string bytes = safetensors_bytes(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})", 12);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(bytes.data() + bytes.size() - 4, &nan, 4);
  std::ofstream(d / "model.safetensors", std::ios::binary) << bytes;
  const SafetensorsSet st = SafetensorsSet::open_file((d / "model.safetensors").string());
  CHECK_THROWS_WITH(st.read_f32("w"), Catch::Contains("tensor 'w' holds NaN at element 2 (of 3)"));
  fs::remove_all(d);
}

TEST_CASE("a config.json that lies is one Error naming the field") {
  const std::string gpt2 = R"("model_type":"gpt2","n_layer":2,"vocab_size":10,"n_positions":8)";
  CHECK(config_error("{" + gpt2 + R"(,"n_embd":16,"n_head":4})") == "(accepted)");
  CHECK_THAT(config_error("{" + gpt2 + R"(,"n_embd":16,"n_head":0})"), Catch::Contains("\"n_head\" is 0"));
  CHECK_THAT(config_error("{" + gpt2 + R"(,"n_embd":18,"n_head":4})"), Catch::Contains("n_embd 18 is not divisible by n_head 4"));
  CHECK_THAT(config_error("{" + gpt2 + R"(,"n_embd":16})"), Catch::Contains("\"n_head\" is missing"));
  CHECK_THAT(config_error("{" + gpt2 + R"(,"n_embd":-16,"n_head":4})"), Catch::Contains("out of range"));
  const std::string llama = R"("model_type":"llama","hidden_size":16,"num_attention_heads":4,"num_hidden_layers":1,)"
                            R"("vocab_size":10,"intermediate_size":8)";
  CHECK(config_error("{" + llama + "}") == "(accepted)");
  CHECK_THAT(config_error("{" + llama + R"(,"num_key_value_heads":3})"), Catch::Contains("3 does not divide num_attention_heads 4"));
  CHECK_THAT(config_error("{" + llama + R"(,"head_dim":8})"), Catch::Contains("head_dim 8 is not hidden_size / num_attention_heads"));
  CHECK_THAT(config_error("{" + llama + R"(,"rope_scaling":{"rope_type":"yarn","factor":4}})"),
             Catch::Contains("rope_scaling \"yarn\" is not supported"));
  CHECK(config_error("{" + llama + R"(,"rope_scaling":{"rope_type":"llama3","factor":8}})") == "(accepted)");
  CHECK_THAT(config_error("{" + llama + R"(,"rope_scaling":{"rope_type":"llama3","factor":0}})"),
             Catch::Contains("must be a positive number"));
  CHECK_THAT(config_error(R"({"model_type":"bert"})"), Catch::Contains("model_type \"bert\" is not supported (gpt2, llama, qwen2)"));
  CHECK_THAT(config_error("{" + llama + R"(,"rope_theta":-1})"), Catch::Contains("must be a positive number"));
}

TEST_CASE("a folder whose tensors disagree with its config is refused before a byte is converted") {
  const fs::path d = fs::temp_directory_path() / ("attnsim-hf-lie-" + std::to_string(getpid()));
  fs::create_directories(d);
  std::ofstream(d / "config.json") << R"({"model_type":"gpt2","n_embd":8,"n_head":2,"n_layer":1,"vocab_size":4,"n_positions":4})";
  std::ofstream(d / "model.safetensors", std::ios::binary)
      << safetensors_bytes(R"({"wte.weight":{"dtype":"F32","shape":[4,4],"data_offsets":[0,64]}})", 64);
  CHECK(is_hf_model_dir(d.string()));
  CHECK_THROWS_WITH(load_hf_model(d.string()), Catch::Contains("tensor 'wte.weight' has shape (4, 4) but config.json implies (4, 8)"));
  fs::remove(d / "model.safetensors");
  std::ofstream(d / "model.safetensors.index.json") << R"({"weight_map":{"wte.weight":"../x.safetensors"}})";
  CHECK_THROWS_WITH(load_hf_model(d.string()), Catch::Contains("must be a plain file name"));
  fs::remove_all(d);
}
