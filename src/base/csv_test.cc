#include "base/csv.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

TEST(Csv, ReadsHeaderAndRows) {
  auto rows = parse_csv("a,b,c\n1,,3\r\n4,5,6\n", "t");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0]["a"], "1");
  EXPECT_EQ((*rows)[0]["b"], "");
  EXPECT_EQ((*rows)[1]["c"], "6");
  EXPECT_EQ((*rows)[1]["missing"], "");
}

TEST(Csv, RaggedLinesAndBrokenQuotesAreErrors) {
  auto ragged = parse_csv("a,b\n1,2,3\n", "t");
  ASSERT_FALSE(ragged.ok());
  EXPECT_EQ(ragged.error().value, "line 2");
  auto unclosed = parse_csv("a,b\n\"1,2,3\n", "t");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_EQ(unclosed.error().value, "line 2");
  EXPECT_FALSE(parse_csv("a,b\n\"1\"x,3\n", "t").ok());  // text after the closing quote
  EXPECT_FALSE(parse_csv("a,b\n1\"2,3\n", "t").ok());    // a quote inside a bare cell
  EXPECT_FALSE(parse_csv("", "t").ok());
}

TEST(Csv, QuotedCellsHoldCommasAndQuotes) {
  auto rows = parse_csv("a,b,c\n\"1,5\",\"say \"\"hi\"\"\",\"\"\n", "t");
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0]["a"], "1,5");
  EXPECT_EQ((*rows)[0]["b"], "say \"hi\"");
  EXPECT_EQ((*rows)[0]["c"], "");
}

}  // namespace
}  // namespace vramplan
