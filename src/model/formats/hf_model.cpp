#include "model/formats/hf_model.h"

#include "engine/checked.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "engine/nesting.h"
#include "engine/packed_weights.h"
#include "model/formats/hf_safetensors.h"

namespace attnsim::model::hf {

namespace {

// The names of one family's tensors. GPT-2 checkpoints come with or without "transformer.".
struct Names {
  const SafetensorsSet& st;
  std::string prefix;  // "", "transformer." (GPT-2) or "model." (Llama)

  std::string full(const std::string& name) const { return prefix + name; }
};

// The float32 tensor `name`, which must have `shape`.
Tensor take(const Names& n, const std::string& name, const Dims& shape) {
  const std::string key = n.full(name);
  const TensorInfo* info = n.st.find(key);
  if (!info) throw Error("the model has no tensor '" + key + "' (config.json says it should)");
  if (info->shape != shape)
    throw Error("tensor '" + key + "' has shape " + format_dims(info->shape) + " but config.json implies " + format_dims(shape));
  return n.st.read_f32(*info);
}

Tensor take_optional(const Names& n, const std::string& name, const Dims& shape, bool wanted) {
  if (!wanted) {
    if (n.st.find(n.full(name)))
      throw Error("tensor '" + n.full(name) + "' is in the model but config.json says there is no such bias");
    return Tensor();
  }
  return take(n, name, shape);
}

// Conv1D's (in, out) seen as nn.Linear's (out, in): a transpose view, no copy (the CPU
// backend's linear reads it in place, strides (1, out)).
Tensor transposed(const Tensor& w) { return w.transpose(0, 1); }

// Columns [first, first+count) of a Conv1D weight (in, 3d), as an nn.Linear (count, in) view.
Tensor conv1d_slice(const Tensor& w, int64_t first, int64_t count) { return w.narrow(1, first, count).transpose(0, 1); }
Tensor vector_slice(const Tensor& b, int64_t first, int64_t count) { return b.narrow(0, first, count).contiguous(); }

std::string gpt2_prefix(const SafetensorsSet& st) {
  return st.find("transformer.wte.weight") ? "transformer." : "";
}

HfLayer read_gpt2_layer(const Names& n, const HfConfig& c, int64_t l) {
  const int64_t d = c.d_model, ff = c.d_ff;
  const std::string p = "h." + std::to_string(l) + ".";
  HfLayer L;
  L.norm1_w = take(n, p + "ln_1.weight", {d});
  L.norm1_b = take(n, p + "ln_1.bias", {d});
  // c_attn: (d, 3d) Conv1D, columns [q | k | v]; attn.bias / attn.masked_bias (the old
  // causal buffers) are not read: the engine builds the causal mask itself
  const Tensor qkv_w = take(n, p + "attn.c_attn.weight", {d, 3 * d});
  const Tensor qkv_b = take(n, p + "attn.c_attn.bias", {3 * d});
  L.attn.W_Q = {conv1d_slice(qkv_w, 0, d), vector_slice(qkv_b, 0, d)};
  L.attn.W_K = {conv1d_slice(qkv_w, d, d), vector_slice(qkv_b, d, d)};
  L.attn.W_V = {conv1d_slice(qkv_w, 2 * d, d), vector_slice(qkv_b, 2 * d, d)};
  L.attn.W_O = {transposed(take(n, p + "attn.c_proj.weight", {d, d})), take(n, p + "attn.c_proj.bias", {d})};
  L.norm2_w = take(n, p + "ln_2.weight", {d});
  L.norm2_b = take(n, p + "ln_2.bias", {d});
  L.fc = {transposed(take(n, p + "mlp.c_fc.weight", {d, ff})), take(n, p + "mlp.c_fc.bias", {ff})};
  L.proj = {transposed(take(n, p + "mlp.c_proj.weight", {ff, d})), take(n, p + "mlp.c_proj.bias", {d})};
  return L;
}

void load_gpt2(HfModel& m, const Names& n) {
  const HfConfig& c = m.config;
  const int64_t d = c.d_model, V = c.vocab;
  m.embed = take(n, "wte.weight", {V, d});
  m.pos_embed = take(n, "wpe.weight", {c.max_positions, d});
  m.norm_f_w = take(n, "ln_f.weight", {d});
  m.norm_f_b = take(n, "ln_f.bias", {d});
  m.unembed = m.embed;  // GPT2LMHeadModel ties lm_head to wte (a stored lm_head.weight is the same tensor)
}

HfLayer read_llama_layer(const Names& n, const HfConfig& c, int64_t l) {
  const int64_t d = c.d_model, ff = c.d_ff, kv = c.kv_heads * c.head_dim();
  const std::string p = "layers." + std::to_string(l) + ".";
  HfLayer L;
  L.norm1_w = take(n, p + "input_layernorm.weight", {d});
  auto proj = [&](const char* name, int64_t out, bool bias) {
    const std::string base = p + "self_attn." + name;
    return Linear{take(n, base + ".weight", {out, d}), take_optional(n, base + ".bias", {out}, bias)};
  };
  L.attn.W_Q = proj("q_proj", d, c.qkv_bias);
  L.attn.W_K = proj("k_proj", kv, c.qkv_bias);
  L.attn.W_V = proj("v_proj", kv, c.qkv_bias);
  L.attn.W_O = proj("o_proj", d, c.o_bias);
  L.norm2_w = take(n, p + "post_attention_layernorm.weight", {d});
  auto mlp = [&](const char* name, int64_t out, int64_t in) {
    const std::string base = p + "mlp." + name;
    return Linear{take(n, base + ".weight", {out, in}), take_optional(n, base + ".bias", {out}, c.mlp_bias)};
  };
  L.gate = mlp("gate_proj", ff, d);
  L.up = mlp("up_proj", ff, d);
  L.down = mlp("down_proj", d, ff);
  return L;
}

void load_llama(HfModel& m, const Names& n) {
  const HfConfig& c = m.config;
  const int64_t d = c.d_model, V = c.vocab;
  m.embed = take(n, "embed_tokens.weight", {V, d});
  m.norm_f_w = take(n, "norm.weight", {d});
  if (c.tied) {
    m.unembed = m.embed;
  } else {
    const Names top{n.st, ""};
    m.unembed = take(top, "lm_head.weight", {V, d});
  }
}

HfLayer read_layer(const Names& n, const HfConfig& c, int64_t l) {
  return c.family == Family::Gpt2 ? read_gpt2_layer(n, c, l) : read_llama_layer(n, c, l);
}

// True when every tensor of the files is F32: then the layers are read once, at load.
bool all_f32(const SafetensorsSet& st) {
  for (const TensorInfo& t : st.tensors())
    if (t.dtype != "F32") return false;
  return true;
}

// Parameter elements the config implies (what load_* reads), in checked arithmetic: one
// layer's, and the rest (embeddings, final norm, an untied lm_head).
int64_t layer_parameter_count(const HfConfig& c) {
  const Size d = c.d_model, ff = c.d_ff, kv = Size(c.kv_heads) * c.head_dim();
  if (c.family == Family::Gpt2) return (Size(4) * d + d * d * 3 + d * 3 + d * d + d + d * ff * 2 + ff + d).value();
  return (Size(2) * d + d * d * 2 + kv * d * 2 + (c.qkv_bias ? d + kv * 2 : Size(0)) + (c.o_bias ? d : Size(0)) +
          d * ff * 3 + (c.mlp_bias ? ff * 2 + d : Size(0))).value();
}

int64_t outer_parameter_count(const HfConfig& c) {
  const Size d = c.d_model, V = c.vocab;
  if (c.family == Family::Gpt2) return (V * d + Size(c.max_positions) * d + Size(2) * d).value();
  return (V * d * (c.tied ? 1 : 2) + d).value();
}

// [SECTION] packing (hf_model.h: which float32 weights stay beside their packed copies)

// One Linear of a layer as nn.Linear's (out, in), and whether its float32 weight stays.
struct LinearShape {
  int64_t out, in;
  bool keep_f32;
};

std::vector<LinearShape> layer_linears(const HfConfig& c) {
  const int64_t d = c.d_model, ff = c.d_ff, kv = c.kv_heads * c.head_dim();
  std::vector<LinearShape> s{{d, d, false}, {kv, d, false}, {kv, d, false}, {d, d, true}};  // W_Q W_K W_V W_O
  if (c.family == Family::Gpt2) s.insert(s.end(), {{ff, d, false}, {d, ff, false}});     // c_fc, c_proj
  else s.insert(s.end(), {{ff, d, false}, {ff, d, false}, {d, ff, false}});               // gate, up, down
  return s;
}

// What packing adds to a float32 model (HfModelBytes's packed, dropped and transient).
HfModelBytes packed_sizes(const HfConfig& c) {
  HfModelBytes p;
  if (!packing_available()) return p;
  Size layer_packed, layer_dropped, largest;
  for (const LinearShape& l : layer_linears(c)) {
    const Size f32 = Size(l.out) * l.in * 4;
    layer_packed += packed_weight_bytes(l.out, l.in);
    if (!l.keep_f32) layer_dropped += f32;
    largest = largest < f32 ? f32 : largest;
  }
  p.packed = (layer_packed * c.layers + packed_weight_bytes(c.vocab, c.d_model)).value();
  p.dropped = (layer_dropped * c.layers).value();
  p.transient = (layer_dropped + largest).value();
  return p;
}

// The weight packed once; the float32 one kept only when `keep_f32` (a Conv1D transpose view
// is copied row-major first, for the packer's (out, in) input).
void pack(Linear& l, bool keep_f32, int64_t& packed_bytes) {
  const Tensor w = l.weight.contiguous();  // (out, in); copies only GPT-2's transposed views
  l.packed = pack_weight(w.f32(), w.size(0), w.size(1));
  packed_bytes = checked_add(packed_bytes, l.packed->bytes(), "packed bytes");
  if (!keep_f32) l.weight = Tensor();
}

void pack_layer(HfLayer& L, int64_t& packed_bytes) {
  for (Linear* l : {&L.attn.W_Q, &L.attn.W_K, &L.attn.W_V, &L.fc, &L.proj, &L.gate, &L.up, &L.down})
    if (l->weight.defined()) pack(*l, false, packed_bytes);
  pack(L.attn.W_O, true, packed_bytes);  // lens.cpp reads W_O per head
}

// predict_hf_model_memory's figures (hf_model.h), from the config and the opened headers.
HfModelBytes predict_model_bytes(const HfConfig& c, const SafetensorsSet& st) {
  const Size layer = Size(layer_parameter_count(c)) * 4, outer = Size(outer_parameter_count(c)) * 4;
  if (all_f32(st)) {
    HfModelBytes p = packed_sizes(c);
    p.params = (outer + layer * Size(c.layers)).value();
    (void)checked_add(p.params, checked_add(p.packed, p.transient), "model bytes");
    return p;
  }
  Size file;
  for (const TensorInfo& t : st.tensors()) file += Size(t.end - t.begin);
  HfModelBytes p;  // half precision: nothing packed
  p.params = (outer + layer + file).value();  // the files count too: in the page they lie in memory (MEMFS)
  return p;
}

}  // namespace

HfModelBytes predict_hf_model_memory(const std::string& dir) {
  return predict_model_bytes(read_hf_config(dir), SafetensorsSet::open_dir(dir));  // headers only
}

int64_t predict_hf_model_bytes(const std::string& dir) { return predict_hf_model_memory(dir).total(); }

int64_t predict_hf_model_bytes(const HfConfig& c, int64_t weight_file_bytes) {
  const Size layer = Size(layer_parameter_count(c)) * 4, outer = Size(outer_parameter_count(c)) * 4;
  HfModelBytes p = packed_sizes(c);
  p.params = (outer + layer * Size(c.layers)).value();
  (void)checked_add(p.params, checked_add(p.packed, p.transient), "model bytes");
  return std::max(p.total(), (outer + layer + Size(weight_file_bytes)).value());
}

void check_hf_download(const std::string& name, const std::string& config_json, int64_t weight_file_bytes, int64_t mem_limit) {
  const std::string what = name + " config.json";
  check_fits(predict_hf_model_bytes(parse_hf_config(parse_json(config_json, what), what), weight_file_bytes), mem_limit,
             "loading " + name + " as float32 (" + human_bytes(weight_file_bytes) + " of weights to download)",
             "nothing of the weights was downloaded");
}

HfModel load_hf_model(const std::string& dir, int64_t mem_limit) {
  HfModel m;
  m.dir = dir;
  m.config = read_hf_config(dir);
  auto st = std::make_shared<const SafetensorsSet>(SafetensorsSet::open_dir(dir));  // every header checked, nothing read yet
  check_fits(predict_model_bytes(m.config, *st).total(), mem_limit, "loading " + dir + " as float32",
             "a smaller model, or more memory");
  try {
    const bool gpt2 = m.config.family == Family::Gpt2;
    m.prefix = gpt2 ? gpt2_prefix(*st) : "model.";
    const Names n{*st, m.prefix};
    if (gpt2) load_gpt2(m, n);
    else load_llama(m, n);
    // every layer read once now: names, shapes and finite values checked before the model is
    // used; kept when the files are F32, else widened again on each use
    const bool keep = all_f32(*st), packs = keep && packing_available();
    for (int64_t l = 0; l < m.config.layers; ++l) {
      HfLayer L = read_layer(n, m.config, l);
      if (packs) pack_layer(L, m.packed_bytes);
      if (keep) m.layers.push_back(std::move(L));
    }
    if (packs) {
      Linear u{m.unembed, Tensor(), nullptr};
      pack(u, true, m.packed_bytes);
      m.unembed_packed = u.packed;
    }
    if (!keep) m.source = std::move(st);
  } catch (const Error& e) {  // name the folder, once
    const std::string what = e.what();
    throw Error(what.rfind(dir, 0) == 0 ? what : dir + ": " + what);
  }
  return m;
}

HfLayer HfModel::layer(int64_t l) const {
  if (!layers.empty()) return layers.at(static_cast<size_t>(l));
  return read_layer(Names{*source, prefix}, config, l);
}

MhaConfig hf_attention_config(const HfConfig& hc, int64_t T, int64_t position0) {
  MhaConfig c;
  c.batch = 1;
  c.tq = c.tk = T;
  c.d_model = hc.d_model;
  c.heads = hc.heads;
  c.kv_heads = hc.kv_heads;
  c.bias = hc.qkv_bias;  // per projection: a Linear whose bias is undefined has none (Qwen2's o_proj)
  c.mask.causal = true;
  c.rope_theta = hc.rope_theta;
  c.rope_scaling = hc.rope_scaling;
  c.position0 = position0;
  return c;
}

HfModel load_hf_checked(const std::string& dir, int64_t command_bytes, int64_t mem_limit, const std::string& what) {
  const int64_t need = checked_add(predict_hf_model_bytes(dir), command_bytes, "memory");
  check_fits(need, mem_limit, what, "fewer tokens, or a smaller model");
  return load_hf_model(dir, mem_limit);
}

}  // namespace attnsim::model::hf
