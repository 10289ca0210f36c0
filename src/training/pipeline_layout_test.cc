#include "vramplan/training/pipeline_layout.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

TEST(PipelineLayout, ReadsMegatronsDeepSeekV3Layout) {
  // Megatron-Bridge's DeepSeek-V3 recipe with pp 8 × vpp 4: 32 stages, 61 decoder layers.
  Result<PipelineLayout> l = parse_pipeline_layout("Et|(tt|)*30mL");
  ASSERT_TRUE(l) << l.error().message();
  ASSERT_EQ(l->chunk_layers.size(), 32u);
  EXPECT_EQ(l->chunk_layers.front(), 1);
  EXPECT_EQ(l->chunk_layers[1], 2);
  EXPECT_EQ(l->chunk_layers[30], 2);
  EXPECT_EQ(l->chunk_layers.back(), 0);
  EXPECT_EQ(l->mtp_layers, 1);
  int64_t total = 0;
  for (int64_t n : l->chunk_layers) total += n;
  EXPECT_EQ(total, 61);
}

TEST(PipelineLayout, UnrollsGroupsThenSingleRepeats) {
  // After Megatron's docstring example "Ettt|(tt|)*29,m|L", with the MTP layer beside the loss.
  Result<PipelineLayout> l = parse_pipeline_layout("Ettt|(tt|)*29,|mL");
  ASSERT_TRUE(l) << l.error().message();
  ASSERT_EQ(l->chunk_layers.size(), 32u);  // 3, 29 × 2, an empty stage, then m and L
  EXPECT_EQ(l->chunk_layers[0], 3);
  EXPECT_EQ(l->chunk_layers[29], 2);
  EXPECT_EQ(l->chunk_layers[30], 0);
  EXPECT_EQ(l->chunk_layers[31], 0);
  Result<PipelineLayout> counted = parse_pipeline_layout("Et*3|(t*2|)*2t*4L");
  ASSERT_TRUE(counted) << counted.error().message();
  EXPECT_EQ(counted->chunk_layers, (std::vector<int64_t>{3, 2, 2, 4}));
}

TEST(PipelineLayout, MtpOutsideTheLastStageIsRefused) {
  // Megatron runs an MTP stage of its own ("m|L"); vramplan keeps MTP layers with the LM head.
  Result<PipelineLayout> l = parse_pipeline_layout("Ettt|(tt|)*29,m|L");
  ASSERT_FALSE(l);
  EXPECT_NE(l.error().reason.find("MTP"), std::string::npos);
}

TEST(PipelineLayout, ErrorsNameTheSetting) {
  for (const char* bad : {"", "tL", "Et", "EtXL", "E(tt|*2L", "Et|(tt|)L", "Et*|tL", "EtLL", "EEtL",
                          "E(t(t)*2)*2L", "Emt|tL", "Et*99999999L"}) {
    Result<PipelineLayout> l = parse_pipeline_layout(bad);
    ASSERT_FALSE(l) << bad;
    EXPECT_EQ(l.error().field, "pipeline_layout") << bad;
    EXPECT_FALSE(l.error().reason.empty()) << bad;
  }
}

TEST(PipelineLayout, WritesWhatItReads) {
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{1, 2, 2, 2, 0},
                                            {4},
                                            {3, 4, 4, 4, 4, 4, 4, 3},
                                            {0, 5, 5, 0},
                                            {2, 1, 2, 1}}) {
    for (int64_t mtp : {0, 1, 2}) {
      const std::string text = pipeline_layout_text(sizes, mtp);
      Result<PipelineLayout> back = parse_pipeline_layout(text);
      ASSERT_TRUE(back) << text << ": " << back.error().message();
      EXPECT_EQ(back->chunk_layers, sizes) << text;
      EXPECT_EQ(back->mtp_layers, mtp) << text;
    }
  }
  EXPECT_EQ(pipeline_layout_text({1, 2, 2, 2, 0}, 1), "Et|(t*2|)*2t*2|mL");
}

}  // namespace
}  // namespace vramplan
