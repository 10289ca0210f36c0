#include "validation/throughput/group_rankings.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

ThroughputRow run(const std::string& id, int64_t gpus, double measured, double predicted) {
  ThroughputRow r;
  r.id = id;
  r.model = id.substr(0, id.find(' '));
  r.gpus = gpus;
  r.measured_tok_s = measured;
  r.predicted_tok_s = predicted;
  return r;
}

TEST(GroupRankings, LayoutAndZeroSplitTheId) {
  EXPECT_EQ(layout_and_zero("8B n2 dp4 tp2 pp2 zero1 mb1 ga64"),
            std::make_pair(std::string("8B n2 dp4 tp2 pp2 mb1 ga64"), std::string("1")));
  EXPECT_EQ(layout_and_zero("8B dp4 tp2"), std::make_pair(std::string(), std::string()));
}

// Three layouts run under both ZeRO stages: the twins order them the same way (ρ 1) while the
// model orders the six runs backwards (ρ −1). A group of two runs is left out.
TEST(GroupRankings, ModelAndTwinsAreRankedApart) {
  const std::vector<ThroughputRow> rows = {
      run("1B dp8 tp1 zero0 mb1", 8, 100, 60),  run("1B dp8 tp1 zero1 mb1", 8, 110, 50),
      run("1B dp4 tp2 zero0 mb1", 8, 200, 40),  run("1B dp4 tp2 zero1 mb1", 8, 210, 30),
      run("1B dp2 tp4 zero0 mb1", 8, 300, 20),  run("1B dp2 tp4 zero1 mb1", 8, 310, 10),
      run("3B dp8 tp1 zero0 mb1", 8, 100, 100), run("3B dp8 tp1 zero1 mb1", 8, 90, 90)};
  const std::vector<GroupRanking> groups = rank_groups(rows);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].model, "1B");
  EXPECT_EQ(groups[0].rows, 6);
  EXPECT_DOUBLE_EQ(groups[0].spearman_tok, -1.0);
  EXPECT_EQ(groups[0].twin_pairs, 3);
  EXPECT_DOUBLE_EQ(groups[0].twin_spearman, 1.0);
}

}  // namespace
}  // namespace vramplan
