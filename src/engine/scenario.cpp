// Scenarios: the named presets and the token embedding. See scenario.h.
#include "scenario.h"

#include <cmath>

#include "error.h"

namespace attnsim {

// [SECTION] tokens and embedding

std::vector<std::string> split_tokens(const std::string& sentence) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : sentence) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!current.empty()) tokens.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) tokens.push_back(current);
  return tokens;
}

std::vector<std::vector<std::string>> batch_tokens(const std::vector<std::string>& sentences,
                                                   int64_t batch, int64_t length) {
  std::vector<std::vector<std::string>> out(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<std::string> words;
    if (!sentences.empty()) {
      const size_t pick = std::min(static_cast<size_t>(b), sentences.size() - 1);
      words = split_tokens(sentences[pick]);
    }
    auto& row = out[static_cast<size_t>(b)];
    for (int64_t t = 0; t < length; ++t) {
      if (sentences.empty())
        row.push_back("t" + std::to_string(t));
      else
        row.push_back(t < static_cast<int64_t>(words.size()) ? words[static_cast<size_t>(t)]
                                                             : kPadToken);
    }
  }
  return out;
}

namespace {

// FNV-1a over the token's bytes seeds a splitmix64 stream; Box-Muller turns it into
// standard normal values. The same bytes always give the same vector.
uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double uniform01(uint64_t& state) {
  return (static_cast<double>(splitmix64(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

}  // namespace

std::vector<float> embed_token(const std::string& token, int64_t d_model) {
  uint64_t state = fnv1a(token);
  std::vector<float> row(static_cast<size_t>(d_model));
  for (int64_t j = 0; j < d_model; j += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform01(state)));
    const double a = 6.283185307179586 * uniform01(state);
    row[static_cast<size_t>(j)] = static_cast<float>(r * std::cos(a));
    if (j + 1 < d_model) row[static_cast<size_t>(j + 1)] = static_cast<float>(r * std::sin(a));
  }
  return row;
}

Tensor embed_tokens(const std::vector<std::vector<std::string>>& tokens, int64_t d_model) {
  const int64_t batch = static_cast<int64_t>(tokens.size());
  const int64_t length = batch ? static_cast<int64_t>(tokens[0].size()) : 0;
  std::vector<float> values;
  values.reserve(static_cast<size_t>(batch * length * d_model));
  for (const auto& row : tokens)
    for (const auto& token : row) {
      const auto v = embed_token(token, d_model);
      values.insert(values.end(), v.begin(), v.end());
    }
  return Tensor::from_values({batch, length, d_model}, values);  // (B, T, d) new storage
}

// [SECTION] inputs

namespace {

Tensor scaled(const Tensor& t, float scale) {
  if (scale == 1.0f) return t;
  auto values = t.to_vector();
  for (auto& v : values) v *= scale;
  return Tensor::from_values(t.shape(), values);  // copies
}

}  // namespace

MhaInputs scenario_inputs(const MhaConfig& config, const std::vector<std::string>& sentences,
                          const std::vector<std::string>& key_sentences, float input_scale,
                          const CellEdits& edits) {
  return apply_edits(config, base_inputs(config, sentences, key_sentences, input_scale), edits);
}

MhaInputs base_inputs(const MhaConfig& config, const std::vector<std::string>& sentences,
                      const std::vector<std::string>& key_sentences, float input_scale) {
  validate(config);
  MhaInputs inputs;
  if (sentences.empty()) {
    inputs = random_inputs(config);
    inputs.query = scaled(inputs.query, input_scale);
    inputs.key = config.self_attention ? inputs.query : scaled(inputs.key, input_scale);
    inputs.value = config.self_attention ? inputs.query : scaled(inputs.value, input_scale);
  } else {
    inputs.query =
        scaled(embed_tokens(batch_tokens(sentences, config.batch, config.tq), config.d_model),
               input_scale);
    if (config.self_attention) {
      inputs.key = inputs.value = inputs.query;
    } else {
      const auto& keys = key_sentences.empty() ? sentences : key_sentences;
      inputs.key = scaled(
          embed_tokens(batch_tokens(keys, config.batch, config.tk), config.d_model), input_scale);
      inputs.value = inputs.key;
    }
  }
  check_inputs(config, inputs);
  return inputs;
}

MhaInputs apply_edits(const MhaConfig& config, MhaInputs inputs, const CellEdits& edits) {
  if (!edits.empty()) {
    // Edits land in the query tensor; self-attention shares it with key and value, so one
    // edited cell flows into q, k and v alike.
    Tensor query = inputs.query.clone();  // copies: the embedding cache stays untouched
    for (const auto& [index, value] : edits) {
      const auto& shape = query.shape();
      bool inside = index.size() == 3;
      for (size_t d = 0; inside && d < 3; ++d) inside = index[d] >= 0 && index[d] < shape[d];
      if (!inside)
        throw Error("edited input cell " + format_dims(index) + " lies outside query " +
                    format_dims(shape));
      query.f32()[query.storage_index(index) - query.offset()] = value;
    }
    inputs.query = query;
    if (config.self_attention) inputs.key = inputs.value = query;
  }
  check_inputs(config, inputs);
  return inputs;
}

MhaInputs scenario_inputs(const Scenario& scenario, bool reference) {
  return scenario_inputs(reference ? scenario.reference : scenario.config, scenario.sentences,
                         scenario.key_sentences, scenario.input_scale);
}

// [SECTION] presets

namespace {

const char* const kSentenceKo = "배고픈 고양이가 부엌에서 생선을 몰래 먹었다";
const char* const kShortKo = "고양이가 생선을 몰래 먹었다";
const char* const kSentenceEn = "a hungry cat quietly ate fish";

MhaConfig small_config(int64_t batch, int64_t tokens) {
  MhaConfig c;
  c.batch = batch;
  c.tq = c.tk = tokens;
  c.d_model = 16;
  c.heads = 4;
  c.seed = 0;
  return c;
}

// A padded batch: element 0 has 6 tokens, element 1 has 4 tokens and 2 pads.
MaskSpec padding(bool keys, bool queries, bool causal = false) {
  MaskSpec m;
  m.causal = causal;
  if (keys) m.key_lengths = {6, 4};
  if (queries) m.query_lengths = {6, 4};
  return m;
}

Scenario bug_case(const char* name, Bug bug, const char* title_en, const char* title_ko,
                  const char* summary_en, const char* summary_ko, MaskSpec mask,
                  const char* focus) {
  Scenario s;
  s.name = name;
  s.title_en = title_en;
  s.title_ko = title_ko;
  s.summary_en = summary_en;
  s.summary_ko = summary_ko;
  s.sentences = {kSentenceKo, kShortKo};
  s.config = small_config(2, 6);
  s.config.mask = mask;
  s.config.bug = bug;
  s.has_reference = true;
  s.reference = s.config;
  s.reference.bug = Bug::None;
  s.focus_step = focus;
  s.focus_batch = 1;
  return s;
}

std::vector<Scenario> make_scenarios() {
  std::vector<Scenario> all;

  Scenario ko;
  ko.name = "default";
  ko.title_en = "Self-attention over a Korean sentence";
  ko.title_ko = "한국어 문장 위의 셀프 어텐션";
  ko.summary_en = "Six tokens, d_model 16, 4 heads: every cell is readable.";
  ko.summary_ko = "토큰 6개, d_model 16, 헤드 4개: 모든 칸을 읽을 수 있는 크기.";
  ko.sentences = {kSentenceKo};
  ko.config = small_config(1, 6);
  ko.focus_step = "query";
  all.push_back(ko);

  Scenario en = ko;
  en.name = "default-en";
  en.title_en = "Self-attention over an English sentence";
  en.title_ko = "영어 문장 위의 셀프 어텐션";
  en.sentences = {kSentenceEn};
  all.push_back(en);

  Scenario cross = ko;
  cross.name = "cross";
  cross.title_en = "Cross-attention: 6 queries, 4 keys";
  cross.title_ko = "크로스 어텐션: 질의 6개, 키 4개";
  cross.summary_en = "Queries from one sentence, keys and values from another: scores are 6 x 4.";
  cross.summary_ko = "질의는 한 문장에서, 키와 값은 다른 문장에서: 점수 행렬이 6 x 4가 된다.";
  cross.key_sentences = {"고양이 한 마리가 있다"};
  cross.config.self_attention = false;
  cross.config.tk = 4;
  cross.focus_step = "scores";
  all.push_back(cross);

  Scenario article;
  article.name = "article";
  article.title_en = "The article's shape: B=32, T=128, d=512, h=8";
  article.title_ko = "글의 크기: B=32, T=128, d=512, h=8";
  article.summary_en = "Random inputs at full size: pick a batch element, zoom and pan.";
  article.summary_ko = "실제 크기의 무작위 입력: 배치 원소를 고르고 확대·이동해서 본다.";
  article.config.batch = 32;
  article.config.tq = article.config.tk = 128;
  article.config.d_model = 512;
  article.config.heads = 8;
  article.focus_step = "query";
  all.push_back(article);

  // decode: the same small stack four ways; the forward run is the prompt's causal pass
  auto decode_case = [&](const char* name, int64_t g, const char* en, const char* ko, const char* sum_en,
                         const char* sum_ko) {
    Scenario s;
    s.name = name;
    s.title_en = en;
    s.title_ko = ko;
    s.summary_en = sum_en;
    s.summary_ko = sum_ko;
    s.sentences = {"the cat sat on the mat"};
    s.config = small_config(1, 6);
    s.config.d_model = 32;
    s.config.heads = 8;
    s.config.kv_heads = g;
    s.config.mask.causal = true;
    s.focus_step = g < 8 ? "k_grouped" : "k_heads";
    s.decode.enabled = true;
    s.decode.prompts = {"the cat sat"};
    s.decode.steps = 13;
    s.decode.layers = 2;
    return s;
  };
  all.push_back(decode_case("decode", 8, "Decode token by token: a KV cache that grows",
                            "한 토큰씩 디코딩: 자라나는 KV 캐시",
                            "Prefill, then one token per step; each layer's cache is one preallocated storage.",
                            "프롬프트를 한 번에 넣고, 그다음 한 걸음에 한 토큰씩. 층마다 캐시는 미리 잡아 둔 저장소 하나다."));
  all.push_back(decode_case("decode-gqa", 2, "Decode with GQA: 8 query heads, 2 K/V heads",
                            "GQA 디코딩: 질의 헤드 8개, K/V 헤드 2개",
                            "Each K/V head feeds 4 query heads through a stride-0 view: a quarter of the cache.",
                            "K/V 헤드 하나가 stride 0 뷰로 질의 헤드 4개를 먹인다. 캐시는 4분의 1."));
  all.push_back(decode_case("decode-mqa", 1, "Decode with MQA: one K/V head", "MQA 디코딩: K/V 헤드 하나",
                            "Every query head reads the same K/V head: an eighth of the MHA cache.",
                            "모든 질의 헤드가 같은 K/V 헤드를 읽는다. MHA 캐시의 8분의 1."));
  {
    Scenario s = decode_case("decode-paged", 2, "A paged KV cache: blocks, block tables, free list",
                             "페이지 KV 캐시: 블록, 블록 테이블, 빈 블록 목록",
                             "Three sequences of different lengths share a pool of 4-position blocks.",
                             "길이가 다른 세 시퀀스가 4칸짜리 블록 풀을 함께 쓴다.");
    s.decode.prompts = {"hi", "the cat sat", "a much longer one"};
    s.decode.steps = 9;
    s.decode.block_size = 4;
    all.push_back(s);
  }
  {
    Scenario s = decode_case("decode-sink", 2, "Attention sinks: keep the first tokens, slide a window",
                             "어텐션 싱크: 첫 토큰을 남기고 창을 민다",
                             "sink=2, window=6: eight slots hold every step's keys, old ones are overwritten.",
                             "sink=2, window=6: 슬롯 8개가 모든 걸음의 키를 담고, 오래된 것은 덮어쓴다.");
    s.decode.steps = 17;
    s.decode.policy = "sink=2,window=6";
    all.push_back(s);
  }
  // the trained model (assets/models/induction: d 128, h 4, 2 layers, 48 positions, BOS);
  // config mirrors its shape, the app shows its layers' real traces beside the decode
  auto trained_case = [&](const char* name, const char* en, const char* ko, const char* sum_en, const char* sum_ko) {
    Scenario s = decode_case(name, 4, en, ko, sum_en, sum_ko);
    s.sentences.clear();
    s.config = small_config(1, 20);
    s.config.d_model = 128;
    s.config.heads = 4;
    s.config.mask.causal = true;
    s.focus_step = "alpha";
    s.decode.trained = true;
    return s;
  };
  {
    Scenario s = trained_case("decode-model", "Decode the trained model: induction heads copy the repeat",
                              "학습된 모델 디코딩: 인덕션 헤드가 반복을 베낀다",
                              "A random string, then its first letters again: layer 1's alpha jumps to the earlier copy and the model writes the rest.",
                              "무작위 문자열 뒤에 그 앞 글자들이 다시 온다. 층 1의 alpha가 앞선 사본으로 건너뛰고 모델이 나머지를 쓴다.");
    s.decode.prompts = {"qwertyuiopasdfghqwe"};
    s.decode.steps = 12;  // to the end of the repeat: the model saw nothing past a second copy
    all.push_back(s);
  }
  {
    Scenario s = trained_case("decode-model-sinks", "Attention sinks on the trained model: keep BOS or not",
                              "학습된 모델의 어텐션 싱크: BOS를 남길까",
                              "BOS and 47 characters through 16 slots: sink=1 keeps BOS, a plain window of 16 evicts it; loss by position for each.",
                              "BOS와 문자 47개를 슬롯 16개로: sink=1은 BOS를 남기고, 같은 크기의 창은 BOS를 밀어낸다. 위치별 손실을 비교한다.");
    // A sequence of the task the model was trained on (BOS, r1 r1, r2 r2, ..., distinct
    // tokens, no separators): row 0 of `experiment streaming`'s batch (repeats of 2..7
    // tokens, make_batch seed 4242), so every earlier copy sits inside the window. The
    // hand-written "kq7kq7 Lm2Lm2 ..." it replaces was out of distribution (a space recurring
    // 7 times): its full-cache loss was worse than a uniform guess. A test checks the match.
    s.decode.prompts = {"1qVFW61qVFW6ipnlo.ipnlo.raZE9xraZE9x2SsdCI2SsdC"};
    s.decode.steps = 0;
    s.decode.policy = "sink=1,window=15";
    all.push_back(s);
  }
  {
    // the language model (assets/models/wordnet-lm-s1: LayerNorm and an MLP in each of its 4
    // blocks): each decode call runs the whole block around the cached attention
    Scenario s = trained_case("decode-lm", "Decode the language model: a KV cache per block",
                              "언어 모델 디코딩: 블록마다 KV 캐시",
                              "A gloss's opening, then one word piece per step: every block's norm and MLP run on the new row only; its K and V join the cache.",
                              "뜻풀이의 첫머리 다음에 한 걸음에 토큰 하나씩: 블록마다 노름과 MLP는 새 행에만 돌고, 그 K와 V가 캐시에 더해진다.");
    s.decode.model = "wordnet-lm-s1";
    s.decode.prompts = {"the act of moving from one place to"};
    s.decode.steps = 10;
    all.push_back(s);
  }

  {
    Scenario s = bug_case(
        "query-padding-nan", Bug::None, "Padding on the query side: NaN rows",
        "질의 쪽 패딩: NaN 행",
        "Padded query rows hide every key; softmax of an all -inf row is NaN, and the NaN "
        "flows into ctx and out. Beside it: key padding only.",
        "패딩된 질의 행은 모든 키를 가린다. 전부 -inf인 행의 softmax는 NaN이고, NaN은 ctx와 "
        "out으로 번진다. 옆은 키 패딩만 쓴 실행.",
        padding(true, true), "alpha");
    s.reference.mask = padding(true, false);
    all.push_back(s);
  }
  all.push_back(bug_case("mask-inverted", Bug::MaskInverted, "Inverted mask direction",
                         "뒤집힌 마스크 방향",
                         "true marks the visible cells: each query sees only what it should "
                         "not.",
                         "true가 보이는 칸을 뜻하게 뒤집혔다: 각 질의가 보면 안 되는 것만 본다.",
                         MaskSpec{true, {}, {}, PadSide::Right}, "alpha"));
  all.push_back(bug_case("mask-two-fills", Bug::MaskTwoFills,
                         "Causal + padding: OR vs two fills", "인과 + 패딩: OR 대 두 번 채우기",
                         "Two masked_fill calls with -inf give the same scores as one OR'd "
                         "mask: the diff shows what really differs.",
                         "-inf로 masked_fill을 두 번 하는 것과 OR로 합친 마스크 한 번은 같은 "
                         "점수를 준다: 차이 보기가 실제 차이를 보여 준다.",
                         padding(true, false, true), "scores_masked"));
  all.push_back(bug_case("mask-additive", Bug::MaskAdditive, "Bool mask added as a number",
                         "불리언 마스크를 숫자로 더하기",
                         "Adding the mask (0/1) shifts hidden scores by +1 instead of hiding "
                         "them.",
                         "마스크(0/1)를 더하면 가려야 할 점수가 가려지지 않고 1만큼 커진다.",
                         MaskSpec{true, {}, {}, PadSide::Right}, "alpha"));
  {
    Scenario s = bug_case(
        "mask-finite-fill", Bug::MaskFiniteFill, "Finite fill value (-1e9)",
        "유한한 채움 값 (-1e9)",
        "A finite fill turns fully hidden rows into a uniform average instead of NaN: the "
        "padded rows look healthy but are not.",
        "유한한 값으로 채우면 완전히 가려진 행이 NaN 대신 균등 평균이 된다: 패딩 행이 멀쩡해 "
        "보이지만 아니다.",
        padding(true, true), "alpha");
    all.push_back(s);
  }
  all.push_back(bug_case("softmax-wrong-axis", Bug::SoftmaxWrongAxis,
                         "Softmax over the wrong axis", "잘못된 축의 소프트맥스",
                         "softmax(dim=-2): columns sum to 1, rows do not.",
                         "softmax(dim=-2): 열의 합이 1이 되고 행의 합은 1이 아니다.",
                         MaskSpec{}, "alpha"));
  {
    Scenario s = bug_case("no-scale", Bug::NoScale, "Missing 1/sqrt(d_k)",
                          "1/sqrt(d_k) 빠뜨리기",
                          "With d_k = 128 the unscaled scores are large and softmax rows "
                          "saturate to one-hot.",
                          "d_k = 128이면 나누지 않은 점수가 커서 소프트맥스 행이 한 칸에 "
                          "몰린다.",
                          MaskSpec{}, "alpha");
    s.config.d_model = s.reference.d_model = 256;
    s.config.heads = s.reference.heads = 2;
    all.push_back(s);
  }
  {
    Scenario s = bug_case("softmax-no-max-fp16", Bug::SoftmaxNoMaxFp16,
                          "fp16 softmax without the row max", "행 최댓값을 빼지 않은 fp16 "
                          "소프트맥스",
                          "exp of a large logit overflows half precision (max 65504): inf/inf "
                          "= NaN.",
                          "큰 로짓의 exp가 반정밀도(최대 65504)를 넘친다: inf/inf = NaN.",
                          MaskSpec{}, "alpha");
    s.input_scale = 8.0f;
    all.push_back(s);
  }
  all.push_back(bug_case("view-without-contiguous", Bug::ViewWithoutContiguous,
                         "view() without contiguous()", "contiguous() 없이 view()",
                         "ctx.transpose(1,2).view(B,T,d) fails: the strides cannot express "
                         "the merged shape.",
                         "ctx.transpose(1,2).view(B,T,d)는 실패한다: 스트라이드로 합친 모양을 "
                         "표현할 수 없다.",
                         MaskSpec{}, "ctx_transposed"));
  return all;
}

}  // namespace

const std::vector<Scenario>& all_scenarios() {
  static const std::vector<Scenario> scenarios = make_scenarios();
  return scenarios;
}

std::vector<std::string> scenario_names() {
  std::vector<std::string> names;
  for (const auto& s : all_scenarios()) names.push_back(s.name);
  return names;
}

const Scenario& find_scenario(const std::string& name) {
  for (const auto& s : all_scenarios())
    if (s.name == name) return s;
  std::string list;
  for (const auto& n : scenario_names()) list += (list.empty() ? "" : ", ") + n;
  throw Error("unknown scenario '" + name + "' (known: " + list + ")");
}

}  // namespace attnsim
