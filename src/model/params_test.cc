#include "vramplan/model/params.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "vramplan/model/hf_config.h"
#include "vramplan/model/presets.h"

namespace vramplan {
namespace {

// Published totals (the sum of the checkpoint's tensor sizes), one row per model.
std::map<std::string, int64_t> published_totals() {
  std::ifstream file(std::string(VRAMPLAN_SOURCE_DIR) + "/tests/param_counts.csv");
  std::map<std::string, int64_t> totals;
  std::string line;
  std::getline(file, line);  // header: model,hf_repo,total_params
  while (std::getline(file, line)) {
    std::stringstream row(line);
    std::string model, repo, total;
    if (std::getline(row, model, ',') && std::getline(row, repo, ',') && std::getline(row, total)) {
      totals[model] = std::stoll(total);
    }
  }
  return totals;
}

// The presets not in param_counts.csv, counted by hand from the transformers modules.
// Notation: h hidden, L layers, a heads, g kv heads, d head_dim, f intermediate, V vocab.
// attn = q h*a*d + k,v 2*h*g*d + o a*d*h; gated mlp = 3*h*f; RMSNorm = h per norm.
const std::map<std::string, int64_t>& hand_totals() {
  static const std::map<std::string, int64_t> kTotals = {
      // Llama-3.2-1B: h=2048 L=16 a=32 g=8 d=64 f=8192 V=128256 tied
      //   layer = attn 10485760 + mlp 50331648 + norms 2h 4096 = 60821504
      //   total = 16*60821504 + V*h 262668288 + final norm 2048 = 1235814400
      {"Llama-3.2-1B", 1235814400},
      // Llama-3.2-3B: h=3072 L=28 a=24 g=8 d=128 f=8192 V=128256 tied
      //   layer = attn 25165824 + mlp 75497472 + norms 6144 = 100669440
      //   total = 28*100669440 + V*h 394002432 + 3072 = 3212749824
      {"Llama-3.2-3B", 3212749824},
      // Llama-3.1-405B: h=16384 L=126 a=128 g=8 d=128 f=53248 V=128256
      //   layer = attn 570425344 + mlp 2617245696 + norms 32768 = 3187703808
      //   total = 126*3187703808 + 2*V*h 4202692608 + 16384 = 405853388800
      {"Llama-3.1-405B", 405853388800},
      // Mistral-7B-v0.3: h=4096 L=32 a=32 g=8 d=128 f=14336 V=32768
      //   layer = attn 41943040 + mlp 176160768 + norms 8192 = 218112000
      //   total = 32*218112000 + 2*V*h 268435456 + 4096 = 7248023552
      {"Mistral-7B-v0.3", 7248023552},
      // Qwen2 adds q/k/v biases (a*d + 2*g*d); o_proj has none.
      // Qwen2.5-3B: h=2048 L=36 a=16 g=2 d=128 f=11008 V=151936 tied
      //   layer = attn 9437184 + qkv bias 2560 + mlp 67633152 + norms 4096 = 77076992
      //   total = 36*77076992 + V*h 311164928 + 2048 = 3085938688
      {"Qwen2.5-3B", 3085938688},
      // Qwen2.5-14B: h=5120 L=48 a=40 g=8 d=128 f=13824 V=152064
      //   layer = attn 62914560 + qkv bias 7168 + mlp 212336640 + norms 10240 = 275268608
      //   total = 48*275268608 + 2*V*h 1557135360 + 5120 = 14770033664
      {"Qwen2.5-14B", 14770033664},
      // Qwen2.5-32B: h=5120 L=64 a=40 g=8 d=128 f=27648 V=152064
      //   layer = attn 62914560 + qkv bias 7168 + mlp 424673280 + norms 10240 = 487605248
      //   total = 64*487605248 + 2*V*h 1557135360 + 5120 = 32763876352
      {"Qwen2.5-32B", 32763876352},
      // Qwen2.5-72B: h=8192 L=80 a=64 g=8 d=128 f=29568 V=152064
      //   layer = attn 150994944 + qkv bias 10240 + mlp 726663168 + norms 16384 = 877684736
      //   total = 80*877684736 + 2*V*h 2491416576 + 8192 = 72706203648
      {"Qwen2.5-72B", 72706203648},
      // Qwen3 adds per-head q_norm and k_norm (d each = 256).
      // Qwen3-0.6B: h=1024 L=28 a=16 g=8 d=128 f=3072 V=151936 tied
      //   layer = attn 6291456 + qk norms 256 + mlp 9437184 + norms 2048 = 15730944
      //   total = 28*15730944 + V*h 155582464 + 1024 = 596049920
      {"Qwen3-0.6B", 596049920},
      // Qwen3-1.7B: h=2048 L=28 a=16 g=8 d=128 f=6144 V=151936 tied
      //   layer = attn 12582912 + qk norms 256 + mlp 37748736 + norms 4096 = 50336000
      //   total = 28*50336000 + V*h 311164928 + 2048 = 1720574976
      //   (the Hub page says 2.03B because the checkpoint also stores the tied lm_head)
      {"Qwen3-1.7B", 1720574976},
      // Qwen3-4B: h=2560 L=36 a=32 g=8 d=128 f=9728 V=151936 tied
      //   layer = attn 26214400 + qk norms 256 + mlp 74711040 + norms 5120 = 100930816
      //   total = 36*100930816 + V*h 388956160 + 2560 = 4022468096
      {"Qwen3-4B", 4022468096},
      // Qwen3-14B: h=5120 L=40 a=40 g=8 d=128 f=17408 V=151936
      //   layer = attn 62914560 + qk norms 256 + mlp 267386880 + norms 10240 = 330311936
      //   total = 40*330311936 + 2*V*h 1555824640 + 5120 = 14768307200
      {"Qwen3-14B", 14768307200},
      // Qwen3-32B: h=5120 L=64 a=64 g=8 d=128 f=25600 V=151936
      //   layer = attn 94371840 + qk norms 256 + mlp 393216000 + norms 10240 = 487598336
      //   total = 64*487598336 + 2*V*h 1555824640 + 5120 = 32762123264
      {"Qwen3-32B", 32762123264},
      // OLMo-2-1124-7B: h=4096 L=32 a=32 g=32 d=128 f=11008 V=100352; q_norm a*d, k_norm g*d
      //   layer = attn 67108864 + qk norms 8192 + mlp 135266304 + post-norms 8192 = 202391552
      //   total = 32*202391552 + 2*V*h 822083584 + 4096 = 7298617344
      {"OLMo-2-1124-7B", 7298617344},
      // Gemma-2 has four norms per layer and ties the head.
      // gemma-2-2b: h=2304 L=26 a=8 g=4 d=256 f=9216 V=256000 tied
      //   layer = attn 14155776 + mlp 63700992 + norms 4h 9216 = 77865984
      //   total = 26*77865984 + V*h 589824000 + 2304 = 2614341888
      {"gemma-2-2b", 2614341888},
      // gemma-2-27b: h=4608 L=46 a=32 g=16 d=128 f=36864 V=256000 tied
      //   layer = attn 56623104 + mlp 509607936 + norms 18432 = 566249472
      //   total = 46*566249472 + V*h 1179648000 + 4608 = 27227128320
      {"gemma-2-27b", 27227128320},
      // Gemma-3 adds per-head q/k norms to Gemma-2's layout.
      // gemma-3-1b-it: h=1152 L=26 a=4 g=1 d=256 f=6912 V=262144 tied
      //   layer = attn 2949120 + qk norms 512 + mlp 23887872 + norms 4608 = 26842112
      //   total = 26*26842112 + V*h 301989888 + 1152 = 999885952
      {"gemma-3-1b-it", 999885952},
      // gemma-3-27b (text model only): h=5376 L=62 a=32 g=16 d=128 f=21504 tied, and
      // V=262208, the Gemma3TextConfig default (text_config has no vocab_size).
      //   layer = attn 66060288 + qk norms 256 + mlp 346816512 + norms 21504 = 412898560
      //   text = 62*412898560 + V*h 1409630208 + 5376 = 27009346304
      //   (Keras Hub lists 27009002240 for the text model: the same arithmetic with V=262144.)
      // Its SigLIP tower (h_v=1152 f_v=4304 27 layers, 896/14 = 64² positions):
      //   layer = 2 LayerNorms 4608 + q/k/v/o with biases 5313024 + fc1 4962512 + fc2 4959360
      //         = 15239504; patch conv 677376 + 1152, positions 4096*1152 4718592,
      //   post_layernorm 2304; projector 1152*5376 + soft-emb norm 1152 = 6194304
      //   vision = 423060336; total 27432406640 (the Hub page: 27.4B)
      {"gemma-3-27b", 27432406640},
      // Mixtral-8x22B-v0.1: h=6144 L=56 a=48 g=8 d=128 V=32000, E=8 experts of f=16384, k=2
      //   layer = attn 88080384 + norms 12288 + router E*h 49152 + experts E*3*h*f 2415919104
      //         = 2504060928
      //   total = 56*2504060928 + 2*V*h 393216000 + 6144 = 140620634112
      {"Mixtral-8x22B-v0.1", 140620634112},
      // Qwen3-235B-A22B: h=4096 L=94 a=64 g=4 d=128 V=151936, E=128 experts of f=1536, k=8
      //   layer = attn 71303168 + qk norms 256 + norms 8192 + router 524288
      //         + experts E*3*h*f 2415919104 = 2487755008
      //   total = 94*2487755008 + 2*V*h 1244659712 + 4096 = 235093634560
      {"Qwen3-235B-A22B", 235093634560},
      // gpt-oss-120b: h=2880 L=36 a=64 g=8 d=64 V=201088, E=128 experts of f=2880, k=4
      //   attn = q 11796480+4096 + k,v 2*(1474560+512) + o 11796480+2880 + sinks 64 = 26550144
      //   expert = gate_up h*2f + 2f + down f*h + h = 24891840; router = E*h + E = 368768
      //   layer = 26550144 + norms 5760 + 368768 + E*24891840 3186155520 = 3213080192
      //   total = 36*3213080192 + 2*V*h 1158266880 + 2880 = 116829156672
      {"gpt-oss-120b", 116829156672},
      // DeepSeek-V2-Lite: h=2048 L=27 a=16, MLA q direct (q_lora_rank null), kv_lora 512,
      // nope 128 rope 64 v 128, V=102400; layer 0 dense f=10944; 26 MoE layers with E=64
      // experts of f_e=1408, k=6, 2 shared experts.
      //   attn = q_proj h*a*192 6291456 + kv_a h*576 1179648 + kv_a_norm 512
      //        + kv_b 512*a*256 2097152 + o a*128*h 4194304 = 13763072
      //   dense layer = 13763072 + norms 4096 + 3*h*f 67239936 = 81007104
      //   moe layer = 13763072 + 4096 + shared 3*h*2*f_e 17301504 + router E*h 131072
      //             + experts E*3*h*f_e 553648128 = 584847872
      //   total = 81007104 + 26*584847872 + 2*V*h 419430400 + 2048 = 15706484224
      {"DeepSeek-V2-Lite", 15706484224},
      // The families of issue 22, counted module by module from transformers (derivations in
      // hybrid_readers_test.cc and docs/models.md); the Hub's rounded figure beside each.
      {"Qwen3-Next-80B-A3B-Instruct", 79674391296},  // 80B (81.3B with the MTP layer)
      {"Nemotron-H-8B-Base-8K", 8100852736},         // 8.1B
      {"granite-4.0-h-small", 32207337984},          // 32B
      {"GLM-4.5-Air", 106852251264},                 // 106B (110B with the MTP layer)
      {"MiniMax-M2", 228689764864},                  // 229B ("230B")
      {"Kimi-K2-Instruct", 1026408232448},           // 1.03T ("1T")
      // DeepSeek-V3's 671026419200 + 61 indexers of 13959424 (wq_b 1536*64*128, wk 7168*128,
      // k_norm 2*128, weights_proj 7168*64).
      {"DeepSeek-V3.2-Exp", 671877944064},
      // OLMo-2-1124-7B's count with V=100278: 7298617344 - 2*74*4096.
      {"Olmo-3-1025-7B", 7298011136},
      // h=2048 L=36 a=16 g=4 f=11008 V=128256 tied: layer 78123008.
      {"SmolLM3-3B", 3075098624},  // 3.08B
      // h=5120 L=64 a=80 g=8 f=27648 V=155136, q/k/v biases: layer 540039168.
      {"Seed-OSS-36B-Instruct", 36151104512},  // 36.2B
      // h=4096 L=32 a=32 g=8 f=14336 V=128167 tied, per-head q/k norms: layer 218112256.
      {"Hunyuan-7B-Instruct", 7504568320},  // 7.5B
      // Mistral text 23572403200 + Pixtral 402702336+603136 + projector 35652608.
      {"Mistral-Small-3.1-24B-Instruct-2503", 24011361280},  // 24B
      // Qwen2.5-7B's 7615616512 + the ViT and merger 676550144.
      {"Qwen2.5-VL-7B-Instruct", 8292166656},  // 8.29B
      // The rest of issue 22 (derivations in src/model/recent/recent_readers_test.cc); each
      // equals transformers 5.24's sum of numel() over the model built on the meta device.
      {"Hunyuan-A13B-Instruct", 80393183232},            // 80.4B ("80B")
      {"Apertus-8B-Instruct-2509", 8053338176},          // 8.05B
      {"Jamba-v0.1", 51570323328},                       // 51.6B ("52B")
      {"Falcon-H1-7B-Instruct", 7585513568},             // 7.59B
      {"Llama-4-Scout-17B-16E-Instruct", 108641793536},  // 109B
      {"Llama-3.2-11B-Vision-Instruct", 10670220835},    // 10.7B
      // Mistral-7B-Instruct-v0.2 text (32,064 rows) + CLIP-L/336 and projector 324,491,264.
      {"llava-v1.6-mistral-7b-hf", 7566747648},  // 7.57B
      // Qwen3 text (tied, 151,936 rows) + the ViT with its merger and 3 DeepStack mergers
      // 415,347,712.
      {"Qwen3-VL-4B-Instruct", 4437815808},  // 4.44B
  };
  return kTotals;
}

ParamCounts count_preset(const std::string& name) {
  const Preset* preset = find_preset(name);
  EXPECT_NE(preset, nullptr) << name;
  if (preset == nullptr) return {};
  Result<ParsedModel> parsed = parse_hf_config(preset->config, preset->name);
  EXPECT_TRUE(parsed.ok()) << name << ": " << (parsed.ok() ? "" : parsed.error().message());
  if (!parsed.ok()) return {};
  return count_parameters(parsed->model);
}

TEST(ParamsTest, CsvCoversThirteenPresets) {
  auto published = published_totals();
  EXPECT_EQ(published.size(), 13u);
  for (const auto& [name, total] : published) {
    EXPECT_NE(find_preset(name), nullptr) << name;
    EXPECT_EQ(hand_totals().count(name), 0u) << name << " is counted twice";
  }
}

TEST(ParamsTest, EveryPresetMatchesItsTotal) {
  auto published = published_totals();
  for (const Preset& preset : presets()) {
    SCOPED_TRACE(preset.name);
    int64_t expected = 0;
    if (auto it = published.find(preset.name); it != published.end()) {
      expected = it->second;
    } else if (auto hand = hand_totals().find(preset.name); hand != hand_totals().end()) {
      expected = hand->second;
    } else {
      ADD_FAILURE() << "no expected total for preset " << preset.name;
      continue;
    }
    EXPECT_EQ(count_preset(preset.name).total, expected);
  }
}

TEST(ParamsTest, BreakdownSumsToTotalAndLayersToo) {
  for (const Preset& preset : presets()) {
    SCOPED_TRACE(preset.name);
    ParamCounts counts = count_preset(preset.name);
    int64_t sum = 0;
    for (const ParamComponent& component : counts.breakdown) {
      EXPECT_GT(component.count, 0) << component.name;
      sum += component.count;
    }
    EXPECT_EQ(sum, counts.total);
    int64_t layers = 0;
    for (const LayerParams& layer : counts.layers) layers += layer.total();
    EXPECT_EQ(counts.embedding + counts.position_embedding + counts.lm_head + counts.final_norm +
                  counts.vision + layers,
              counts.total);
  }
}

// Active = total minus the routed experts a token skips; the input embedding is included.
TEST(ParamsTest, ActiveParameters) {
  // Mixtral-8x7B: 46702792704 - 32 layers * 6 idle experts * 3*4096*14336 = 12.88e9 (~12.9B).
  EXPECT_EQ(count_preset("Mixtral-8x7B-v0.1").active, 12879925248);
  // Qwen3-30B-A3B: 30532122624 - 48 * 120 * 3*2048*768 = 3.35e9 (~3.3B).
  EXPECT_EQ(count_preset("Qwen3-30B-A3B").active, 3353032704);
  // DeepSeek-V3: 671026419200 - 58 * 248 * 3*7168*2048 = 37.55e9 (~37B).
  EXPECT_EQ(count_preset("DeepSeek-V3").active, 37552297472);
  // gpt-oss-20b: 20914757184 - 24 * 28 * 24891840 = 4.19e9; the published 3.6B leaves out the
  // 0.58e9 input embedding (4187440704 - 201088*2880 = 3608307264).
  EXPECT_EQ(count_preset("gpt-oss-20b").active, 4187440704);
  // gpt-oss-120b: 116829156672 - 36 * 124 * 24891840 = 5.71e9 (5.13e9 without the embedding).
  EXPECT_EQ(count_preset("gpt-oss-120b").active, 5711982912);
  // Mixtral-8x22B: 140620634112 - 56 * 6 * 3*6144*16384 = 39.15e9 (~39B).
  EXPECT_EQ(count_preset("Mixtral-8x22B-v0.1").active, 39152031744);
  // Qwen3-235B-A22B: 235093634560 - 94 * 120 * 3*4096*1536 = 22.19e9 (~22B).
  EXPECT_EQ(count_preset("Qwen3-235B-A22B").active, 22190763520);
  // DeepSeek-V2-Lite: 15706484224 - 26 * 58 * 3*2048*1408 = 2.66e9.
  EXPECT_EQ(count_preset("DeepSeek-V2-Lite").active, 2661150208);
  EXPECT_EQ(count_preset("Llama-3.1-8B").active, count_preset("Llama-3.1-8B").total);
  // Qwen3-Next: 48 layers × 502 idle experts × 3*2048*512 → 3.87e9 (3.25e9 without the
  // embedding: "A3B").
  EXPECT_EQ(count_preset("Qwen3-Next-80B-A3B-Instruct").active, 3874929408);
  // GLM-4.5-Air: 45 × 120 idle × 3*4096*1408 → 13.42e9 (12.18e9 without the embedding: "12B").
  EXPECT_EQ(count_preset("GLM-4.5-Air").active, 13424129664);
  // MiniMax-M2: 62 × 248 idle × 3*3072*1536 → 11.03e9 (9.8e9 without the embedding: "10B").
  EXPECT_EQ(count_preset("MiniMax-M2").active, 11030553088);
  // Kimi-K2: 60 × 376 idle × 3*7168*2048 → 32.86e9 ("32B activated").
  EXPECT_EQ(count_preset("Kimi-K2-Instruct").active, 32861500928);
  // granite-4.0-h-small: 40 × 62 idle × 3*4096*768 → 8.80e9 ("9B active").
  EXPECT_EQ(count_preset("granite-4.0-h-small").active, 8803121664);
}

ModelConfig parse_or_die(const std::string& json) {
  Result<ParsedModel> parsed = parse_hf_config(json, "test");
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message());
  return parsed.ok() ? parsed->model : ModelConfig{};
}

// A tiny Llama worked by hand: h=64 L=2 a=4 g=2 d=64/4=16 f=128 V=100.
//   q 64*64 = 4096, k 64*32 = 2048, v 2048, o 64*64 = 4096 -> attention 12288
//   mlp 3*64*128 = 24576; norms 2*64 = 128; layer = 36992
//   total = 2*36992 + embedding 100*64 = 6400 + lm_head 6400 + final norm 64 = 86848
constexpr char kTinyLlama[] = R"({
  "model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
  "vocab_size": 100, "tie_word_embeddings": false })";

TEST(ParamsTest, TinyLlamaByHand) {
  ParamCounts counts = count_parameters(parse_or_die(kTinyLlama));
  ASSERT_EQ(counts.layers.size(), 2u);
  EXPECT_EQ(counts.layers[0].attention, 12288);
  EXPECT_EQ(counts.layers[0].attention_replicated, 0);
  EXPECT_EQ(counts.layers[0].mlp, 24576);
  EXPECT_EQ(counts.layers[0].norms, 128);
  EXPECT_EQ(counts.layers[0].total(), 36992);
  EXPECT_EQ(counts.embedding, 6400);
  EXPECT_EQ(counts.lm_head, 6400);
  EXPECT_EQ(counts.final_norm, 64);
  EXPECT_EQ(counts.total, 86848);
  EXPECT_EQ(counts.active, 86848);
  EXPECT_EQ(counts.mtp_total, 0);
}

TEST(ParamsTest, TiedEmbeddingsCountOnce) {
  ModelConfig model = parse_or_die(kTinyLlama);
  model.tied_embeddings = true;
  ParamCounts counts = count_parameters(model);
  EXPECT_EQ(counts.lm_head, 0);
  EXPECT_EQ(counts.total, 86848 - 6400);
}

// head_dim 32 != h/a = 16: q 64*128 = 8192, k 64*64 = 4096, v 4096, o 128*64 = 8192 = 24576.
TEST(ParamsTest, GqaHeadDimDecoupledFromHidden) {
  ModelConfig model = parse_or_die(kTinyLlama);
  model.head_dim = 32;
  EXPECT_EQ(count_parameters(model).layers[0].attention, 24576);
}

// A tiny DeepSeek-V3: h=32 L=3 a=2, first layer dense (f=64), then MoE with E=4 experts of
// f_e=8, k=2, one shared expert; MLA q_lora 16, kv_lora 8, nope 4, rope 2, v 4; V=10.
//   sharded:    q_b 16*2*(4+2) = 192, kv_b 8*2*(4+4) = 128, o 2*4*32 = 256 -> 576
//   replicated: q_a 32*16 = 512, q_a_norm 16, kv_a 32*(8+2) = 320, kv_a_norm 8 -> 856
//   norms 2*32 = 64
//   dense layer = 576 + 856 + 64 + 3*32*64 = 6144 -> 7640
//   MoE layer = 576 + 856 + 64 + shared 3*32*8 = 768 + router 4*32 + 4 correction = 132
//             + experts 4*768 = 3072 -> 5468 (active experts 2*768 = 1536)
//   total = 7640 + 2*5468 + 2*10*32 + 32 = 19248; active = 19248 - 2*(3072-1536) = 16176
//   MTP: block 5468 + enorm 32 + hnorm 32 + eh_proj 2*32*32 + head norm 32 = 7612
constexpr char kTinyDeepseek[] = R"({
  "model_type": "deepseek_v3", "hidden_size": 32, "num_hidden_layers": 3,
  "num_attention_heads": 2, "num_key_value_heads": 2, "intermediate_size": 64,
  "moe_intermediate_size": 8, "n_routed_experts": 4, "num_experts_per_tok": 2,
  "n_shared_experts": 1, "first_k_dense_replace": 1, "moe_layer_freq": 1,
  "q_lora_rank": 16, "kv_lora_rank": 8, "qk_nope_head_dim": 4, "qk_rope_head_dim": 2,
  "v_head_dim": 4, "vocab_size": 10, "num_nextn_predict_layers": 1,
  "tie_word_embeddings": false })";

TEST(ParamsTest, MoeWithDenseFirstLayerAndMla) {
  ParamCounts counts = count_parameters(parse_or_die(kTinyDeepseek));
  ASSERT_EQ(counts.layers.size(), 3u);
  const LayerParams& dense = counts.layers[0];
  EXPECT_EQ(dense.attention, 576);
  EXPECT_EQ(dense.attention_replicated, 856);
  EXPECT_EQ(dense.mlp, 6144);
  EXPECT_EQ(dense.router, 0);
  EXPECT_EQ(dense.routed_experts, 0);
  EXPECT_EQ(dense.total(), 7640);
  const LayerParams& moe = counts.layers[1];
  EXPECT_EQ(moe.mlp, 768);
  EXPECT_EQ(moe.router, 128);  // the correction bias is a buffer, not a router parameter
  EXPECT_EQ(moe.buffers, 4);
  EXPECT_EQ(moe.parameters(), 5468 - 4);
  EXPECT_EQ(moe.routed_experts, 3072);
  EXPECT_EQ(moe.active_routed_experts, 1536);
  EXPECT_EQ(moe.total(), 5468);
  EXPECT_EQ(moe.dense(), 5468 - 3072);
  EXPECT_EQ(counts.total, 19248);
  EXPECT_EQ(counts.active, 16176);
  EXPECT_EQ(counts.mtp_layer.total(), 5468);
  EXPECT_EQ(counts.mtp_extra, 2144);
  EXPECT_EQ(counts.mtp_total, 7612);
}

TEST(ParamsTest, MlaWithoutQueryCompression) {
  ModelConfig model = parse_or_die(kTinyDeepseek);
  model.mla.q_lora_rank = 0;  // q_proj 32 * 2*(4+2) = 384 replaces q_a, q_a_norm and q_b
  LayerParams layer = count_parameters(model).layers[0];
  EXPECT_EQ(layer.attention, 384 + 128 + 256);
  EXPECT_EQ(layer.attention_replicated, 320 + 8);
}

TEST(ParamsTest, DeepseekV3MtpModule) {
  ParamCounts counts = count_preset("DeepSeek-V3");
  const int64_t h = 7168;
  EXPECT_EQ(counts.layers[3].router, 256 * h);  // the gate; e_score_correction_bias is a buffer
  EXPECT_EQ(counts.layers[3].buffers, 256);
  EXPECT_EQ(counts.buffers, 58 * 256);  // the Hub total counts them, model.parameters() not
  EXPECT_EQ(counts.mtp_layer.total(), counts.layers.back().total());
  EXPECT_EQ(counts.mtp_extra, 3 * h + 2 * h * h);
  // 11507286272 + 102781952: MTP is trained but not part of the 671B Hub total.
  EXPECT_EQ(counts.mtp_total, 11610068224);
}

// GPT-2 small: Conv1D layers with biases, LayerNorm (weight and bias), learned positions.
TEST(ParamsTest, Gpt2BiasesAndPositions) {
  ParamCounts counts = count_preset("gpt2");
  const int64_t h = 768;
  EXPECT_EQ(counts.embedding, 50257 * h);
  EXPECT_EQ(counts.position_embedding, 1024 * h);
  EXPECT_EQ(counts.lm_head, 0);         // tied to wte
  EXPECT_EQ(counts.final_norm, 2 * h);  // ln_f
  const LayerParams& layer = counts.layers[0];
  EXPECT_EQ(layer.attention, h * 3 * h + 3 * h + h * h);  // c_attn + bias, c_proj weight
  EXPECT_EQ(layer.attention_replicated, h);               // c_proj bias
  EXPECT_EQ(layer.mlp, h * 4 * h + 4 * h + 4 * h * h + h);
  EXPECT_EQ(layer.norms, 4 * h);  // ln_1, ln_2 with biases
  EXPECT_EQ(counts.total, 124439808);
}

TEST(ParamsTest, GptOssSinksAndBiases) {
  ParamCounts counts = count_preset("gpt-oss-20b");
  const int64_t h = 2880, f = 2880, experts = 32;
  const LayerParams& layer = counts.layers[0];
  EXPECT_EQ(layer.attention_replicated, h + 64);  // o_proj bias + one sink per head
  EXPECT_EQ(layer.router, experts * h + experts);
  EXPECT_EQ(layer.routed_experts, experts * (3 * h * f + 2 * f + h));
  EXPECT_EQ(layer.active_routed_experts, 4 * (3 * h * f + 2 * f + h));
}

TEST(ParamsTest, QkNormsAreReplicated) {
  EXPECT_EQ(count_preset("Qwen3-8B").layers[0].attention_replicated, 2 * 128);
  EXPECT_EQ(count_preset("OLMo-2-1124-7B").layers[0].attention_replicated, 4096 + 4096);
  EXPECT_EQ(count_preset("gemma-2-9b").layers[0].norms, 4 * 3584);
}

}  // namespace
}  // namespace vramplan
