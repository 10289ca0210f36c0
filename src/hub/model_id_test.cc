#include "hub/model_id.h"

#include <gtest/gtest.h>

namespace vramplan::hub {
namespace {

TEST(ModelIdTest, OrgAndNameDefaultToMain) {
  Result<ModelRef> ref = parse_model_ref("meta-llama/Llama-3.1-8B");
  ASSERT_TRUE(ref.ok()) << ref.error().message();
  EXPECT_EQ(ref->repo_id, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(ref->revision, "main");
  EXPECT_FALSE(ref->revision_given);
}

}  // namespace
}  // namespace vramplan::hub
