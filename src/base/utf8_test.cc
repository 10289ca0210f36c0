#include "base/utf8.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

TEST(Utf8, WellFormedTextIsUnchanged) {
  const std::string text = "seq_len: 4096 # Ünïcødé, 日本語, 🙂";
  EXPECT_EQ(valid_utf8(text), text);
  EXPECT_EQ(valid_utf8(""), "");
}

TEST(Utf8, EachBadByteBecomesOneReplacementCharacter) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(valid_utf8("a\xFF"
                       "b"),
            "a" + fffd + "b");
  EXPECT_EQ(valid_utf8("caf\xE9"), "caf" + fffd);                        // Latin-1 é
  EXPECT_EQ(valid_utf8("\xC0\xAF"), fffd + fffd);                        // overlong '/'
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), fffd + fffd + fffd);             // a surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
  EXPECT_EQ(valid_utf8("\xE6\x97"), fffd + fffd);                        // cut short
}

}  // namespace
}  // namespace vramplan
