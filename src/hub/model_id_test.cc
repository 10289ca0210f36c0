#include "hub/model_id.h"

#include <gtest/gtest.h>

#include <string>

namespace vramplan::hub {
namespace {

TEST(ModelIdTest, OrgAndNameDefaultToMain) {
  Result<ModelRef> ref = parse_model_ref("meta-llama/Llama-3.1-8B");
  ASSERT_TRUE(ref.ok()) << ref.error().message();
  EXPECT_EQ(ref->repo_id, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(ref->revision, "main");
  EXPECT_FALSE(ref->revision_given);
  EXPECT_EQ(ref->text(), "meta-llama/Llama-3.1-8B");
}

TEST(ModelIdTest, RevisionAfterAt) {
  for (const char* revision :
       {"v1.0", "refs/pr/1", "0123456789abcdef0123456789abcdef01234567", "my_branch-2"}) {
    Result<ModelRef> ref = parse_model_ref(std::string("Qwen/Qwen3-8B@") + revision);
    ASSERT_TRUE(ref.ok()) << revision << ": " << ref.error().message();
    EXPECT_EQ(ref->revision, revision);
    EXPECT_TRUE(ref->revision_given);
    EXPECT_EQ(ref->text(), std::string("Qwen/Qwen3-8B@") + revision);
  }
}

TEST(ModelIdTest, HubNameCharactersAccepted) {
  for (const char* id :
       {"a/b", "org_1/Name.With-Dots_2", "_x/_y", "1/2", "TheBloke/Llama-2-7B-GPTQ"})
    EXPECT_TRUE(parse_model_ref(id).ok()) << id;
}

// Each bad value is an error naming "model", the value as given, and the reason.
struct BadId {
  const char* text;
  const char* reason_part;
};

TEST(ModelIdTest, RefusesWhatIsNotAHubId) {
  const std::string long_name(97, 'a');
  const std::string long_id = "org/" + long_name;
  const BadId cases[] = {
      {"", "no model given"},
      {"https://huggingface.co/meta-llama/Llama-3.1-8B", "a URL"},
      {"http://evil.example/org/name", "a URL"},
      {"huggingface.co/meta-llama/Llama-3.1-8B", "a URL"},
      {"/etc/passwd", "path"},
      {"~/models/x", "path"},
      {"Llama-3.1-8b-typo", "organisation or user"},
      {"a/b/c", "more than one '/'"},
      {"org/../../etc", "more than one '/'"},
      {"org/..", "must start and end"},
      {"org/na..me", "\"..\""},
      {"org/na--me", "\"--\""},
      {"org/-name", "must start and end"},
      {"org/name.", "must start and end"},
      {"org/name.git", ".git"},
      {"org/na me", "contains ' '"},
      {"org/name?x=1", "contains '?'"},
      {"org/name#frag", "contains '#'"},
      {"org/", "the name is empty"},
      {"/name", "path"},
      {long_id.c_str(), "at most 96"},
      {"org/name@", "revision after '@' is empty"},
      {"org/name@main branch", "a space"},
      {"org/name@../../etc", "\"..\""},
      {"org/name@a/../b", "\"..\""},
      {"org/name@a//b", "\"//\""},
      {"org/name@a\tb", "contains"},
      {"org/name@x@y", "contains '@'"},
  };
  for (const BadId& c : cases) {
    Result<ModelRef> ref = parse_model_ref(c.text);
    ASSERT_FALSE(ref.ok()) << c.text;
    EXPECT_EQ(ref.error().field, "model");
    EXPECT_EQ(ref.error().value, c.text);
    EXPECT_NE(ref.error().reason.find(c.reason_part), std::string::npos)
        << c.text << ": " << ref.error().reason;
    EXPECT_NE(ref.error().accepted.find("org/name@revision"), std::string::npos);
  }
}

TEST(ModelIdTest, CommitHashIsFortyLowerCaseHexDigits) {
  EXPECT_TRUE(is_commit_hash("0123456789abcdef0123456789abcdef01234567"));
  EXPECT_FALSE(is_commit_hash("0123456789ABCDEF0123456789abcdef01234567"));
  EXPECT_FALSE(is_commit_hash("0123456"));
  EXPECT_FALSE(is_commit_hash("main"));
}

TEST(ModelIdTest, CacheFolderNameAsHuggingfaceHub) {
  EXPECT_EQ(repo_folder_name("meta-llama/Llama-3.1-8B"), "models--meta-llama--Llama-3.1-8B");
}

}  // namespace
}  // namespace vramplan::hub
