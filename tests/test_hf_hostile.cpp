// Hostile Hugging Face folders: safetensors headers and config.json files that lie. Each is
// one Error naming the problem, raised from the headers before any tensor byte is read.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "engine/error.h"
#include "model/formats/hf_config.h"
#include "model/formats/hf_model.h"
#include "model/formats/hf_safetensors.h"
#include "model/formats/hf_text.h"

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

// [SECTION] issue 37: bounded work, files that change under a pass, ids past the tokenizer

TEST_CASE("rope_theta and bos_token_id outside what the model can use name their field") {
  const std::string llama = R"({"model_type":"llama","hidden_size":16,"num_attention_heads":4,"num_hidden_layers":1,)"
                            R"("vocab_size":10,"intermediate_size":8)";
  CHECK_THAT(config_error(llama + R"(,"rope_theta":1e-300})"), Catch::Contains("rope_theta 1e-300 is outside what RoPE can use"));
  CHECK_THAT(config_error(llama + R"(,"rope_theta":0.5})"), Catch::Contains("rope_theta 0.5"));
  CHECK(config_error(llama + R"(,"rope_theta":500000.0})") == "(accepted)");
  CHECK_THAT(config_error(llama + R"(,"bos_token_id":10})"), Catch::Contains("bos_token_id 10 is not a token id of the model (vocab_size 10)"));
  CHECK(config_error(llama + R"(,"bos_token_id":9})") == "(accepted)");
}

TEST_CASE("a shard truncated while a pass reads it is one Error (pread), not SIGBUS (mmap)") {
  const fs::path d = fs::temp_directory_path() / ("attnsim-st-shrink-" + std::to_string(getpid()));
  fs::create_directories(d);
  const std::string header = R"({"a":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[600000],"data_offsets":[8,1200008]}})";
  std::ofstream(d / "model.safetensors", std::ios::binary) << safetensors_bytes(header, 1200008);
  const SafetensorsSet st = SafetensorsSet::open_file((d / "model.safetensors").string());
  CHECK(st.read_f32("b").numel() == 600000);
  fs::resize_file(d / "model.safetensors", 8 + header.size() + 100000);  // another process cuts it short
  CHECK(st.read_f32("a").numel() == 4);
  CHECK_THROWS_WITH(st.read_f32("b"), Catch::Contains("file shrank"));
  fs::remove_all(d);
}

TEST_CASE("40,000 tensors open in linear time, each found by name") {
  const fs::path d = fs::temp_directory_path() / ("attnsim-st-many-" + std::to_string(getpid()));
  fs::create_directories(d);
  std::string header = "{";
  for (int i = 0; i < 40000; ++i)
    header += (i ? "," : "") + std::string("\"t") + std::to_string(i) + R"(":{"dtype":"F32","shape":[1],"data_offsets":[)" +
              std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
  std::string bytes = safetensors_bytes(header + "}", 4 * 40000);
  const float seven = 7.0f;
  std::memcpy(bytes.data() + bytes.size() - 4, &seven, 4);  // t39999
  std::ofstream(d / "model.safetensors", std::ios::binary) << bytes;
  const SafetensorsSet st = SafetensorsSet::open_file((d / "model.safetensors").string());
  CHECK(st.tensors().size() == 40000);
  CHECK(st.read_f32("t39999").f32()[0] == 7.0f);
  CHECK(st.find("t40000") == nullptr);
  fs::remove_all(d);
}

TEST_CASE("a shard index is read as a stream and checked both ways against its shards") {
  const fs::path d = fs::temp_directory_path() / ("attnsim-st-index-" + std::to_string(getpid()));
  fs::create_directories(d);
  std::ofstream(d / "s1.safetensors", std::ios::binary)
      << safetensors_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8);
  auto index_error = [&](const std::string& json) -> std::string {
    std::ofstream(d / "model.safetensors.index.json") << json;
    try {
      SafetensorsSet::open_dir(d.string());
    } catch (const Error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  CHECK(index_error(R"({"metadata": {"total_size": 8}, "weight_map": {"a": "s1.safetensors", "b": "s1.safetensors"}})") == "(accepted)");
  CHECK_THAT(index_error(R"({"weight_map": {"a": "s1.safetensors", "b": "s1.safetensors", "c": "s1.safetensors"}})"),
             Catch::Contains("'c' is not in s1.safetensors"));
  CHECK_THAT(index_error(R"({"weight_map": {"a": "s1.safetensors"}})"), Catch::Contains("does not list 'b'"));
  CHECK_THAT(index_error(R"({"weight_map": {"a": "s1.safetensors", "a": "s1.safetensors"}})"), Catch::Contains("'a' is listed twice"));
  CHECK_THAT(index_error(R"({"weight_map": {"a": 3}})"), Catch::Contains("the shard of 'a' must be a file name, not a number"));
  CHECK_THAT(index_error(R"({"weight_map": [1]})"), Catch::Contains("needs a \"weight_map\" object"));
  CHECK_THAT(index_error(R"({"other": {}})"), Catch::Contains("needs a \"weight_map\" object"));
  CHECK_THAT(index_error(R"({"weight_map": {"a": "s1.safe)"), Catch::Contains("not valid JSON"));
  std::string many = R"({"weight_map": {)";
  for (size_t i = 0; i <= kMaxShards; ++i) many += (i ? "," : "") + std::string("\"t") + std::to_string(i) + "\": \"s" + std::to_string(i) + "\"";
  CHECK_THAT(index_error(many + "}}"), Catch::Contains("names more than 4096 shard files"));
  fs::remove_all(d);
}

TEST_CASE("ids past the tokenizer (a config vocabulary padded beyond it, as Qwen2's) read as <id N>") {
  const std::string dir = std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/hf_gpt2_tok";
  const HfText text = open_hf_text(dir, true);
  REQUIRE(text.tokenizer);
  CHECK(text.label(270) == "<id 270>");
  CHECK(text.label(300000) == "<id 300000>");
  const std::string hi = text.text({text.tokenizer->encode("Hi")});
  CHECK(text.text({text.tokenizer->encode("Hi")[0], 270}) == text.text({text.tokenizer->encode("Hi")[0]}) + "<id 270>");
  CHECK(hi == "Hi");
}

TEST_CASE("vocab.json without merges.txt is refused, not read as a folder without a tokenizer") {
  const fs::path d = fs::temp_directory_path() / ("attnsim-no-merges-" + std::to_string(getpid()));
  fs::create_directories(d);
  fs::copy_file(std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/hf_gpt2_tok/vocab.json", d / "vocab.json");
  CHECK_THROWS_WITH(open_hf_text(d.string(), false), Catch::Contains("has vocab.json but no merges.txt"));
  fs::remove_all(d);
}
