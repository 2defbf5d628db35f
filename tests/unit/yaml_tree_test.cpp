// The YAML loader: the values readers see (nulls, quoted and plain scalars, tags), aliases that
// share rather than copy, and the nesting limit.
#include "messages/yaml/yaml_tree.hpp"

#include <gtest/gtest.h>

#include <variant>

namespace caldera {
namespace {

std::vector<YamlNode> load(const std::string& text) {
  auto r = load_yaml(text, 100);
  if (auto* e = std::get_if<YamlLoadError>(&r)) {
    ADD_FAILURE() << "line " << e->line << ": " << e->message;
    return {};
  }
  return std::get<std::vector<YamlNode>>(r);
}

YamlLoadError error_of(const std::string& text, int depth = 100) {
  auto r = load_yaml(text, depth);
  if (auto* e = std::get_if<YamlLoadError>(&r)) return *e;
  ADD_FAILURE() << "loaded: " << text;
  return {};
}

const YamlNode& value(const YamlNode& map, const std::string& key) {
  for (const auto& [k, v] : map.entries())
    if (k.scalar() == key) return v;
  static const YamlNode none;
  return none;
}

TEST(YamlTree, NullsAreUnquotedAndUntagged) {
  auto docs = load("a:\nb: ~\nc: null\nd: ''\ne: 'null'\nf: !!str null\ng: NULL\n");
  ASSERT_EQ(docs.size(), 1u);
  const auto& m = docs[0];
  for (const char* k : {"a", "b", "c", "g"}) EXPECT_TRUE(value(m, k).is_null()) << k;
  for (const char* k : {"d", "e", "f"}) EXPECT_TRUE(value(m, k).is_scalar()) << k;
  EXPECT_FALSE(value(m, "missing").defined());
}

TEST(YamlTree, QuotedAndBlockScalarsAreNotPlainAndTagsAreKept) {
  auto docs = load("n: 3\nq: \"3\"\ns: '3'\nl: |\n  3\nt: !!str 3\ni: !!int 3\n");
  ASSERT_EQ(docs.size(), 1u);
  const auto& m = docs[0];
  EXPECT_TRUE(value(m, "n").plain());
  EXPECT_TRUE(value(m, "n").tag().empty());
  for (const char* k : {"q", "s", "l"}) EXPECT_FALSE(value(m, k).plain()) << k;
  EXPECT_EQ(value(m, "l").scalar(), "3\n");
  EXPECT_FALSE(value(m, "t").tag().empty());
  EXPECT_NE(value(m, "t").tag(), value(m, "i").tag());
}

TEST(YamlTree, DocumentsComeInOrderAndEmptyOnesAreNull) {
  auto docs = load("a: 1\n---\n# nothing\n---\n[x, y]\n");
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_TRUE(docs[0].is_map());
  EXPECT_TRUE(docs[1].is_null());
  ASSERT_TRUE(docs[2].is_sequence());
  EXPECT_EQ(docs[2].items()[1].scalar(), "y");
}

// An alias is the node it names, not a copy: "billion laughs" stays small to load (what readers
// walk is bounded by their own node budget).
TEST(YamlTree, AliasesShareTheirNode) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 30; ++i)
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) +
            ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
  auto docs = load(text);
  ASSERT_EQ(docs.size(), 1u);
  const auto& top = value(docs[0], "a29");
  ASSERT_TRUE(top.is_sequence());
  ASSERT_EQ(top.items().size(), 3u);
  EXPECT_EQ(&top.items()[0].items(), &top.items()[1].items()) << "copied, not shared";
}

TEST(YamlTree, AnAliasMustNameACompleteNode) {
  auto e = error_of("a: &loop [1, *loop]\n");
  EXPECT_EQ(e.line, 1);
  EXPECT_NE(e.message.find("*loop"), std::string::npos) << e.message;
  e = error_of("a: *nowhere\n");
  EXPECT_NE(e.message.find("*nowhere"), std::string::npos) << e.message;
}

TEST(YamlTree, NestingBeyondTheLimitStopsAtItsLine) {
  auto e = error_of("a:\n  b:\n    c: [[1]]\n", 4);
  EXPECT_TRUE(e.too_deep);
  EXPECT_EQ(e.line, 3);
  auto fine = load_yaml("a:\n  b:\n    c: [1]\n", 4);
  EXPECT_TRUE(std::holds_alternative<std::vector<YamlNode>>(fine));
}

TEST(YamlTree, SyntaxErrorsSayWhereAndWhat) {
  auto e = error_of("a: [1, 2\n");
  EXPECT_FALSE(e.too_deep);
  EXPECT_GT(e.line, 0);
  EXPECT_FALSE(e.message.empty());
}

TEST(YamlTree, ALongRunOfBlanksWhereTheParserLooksAheadIsRefusedAtItsLine) {
  const std::string at_limit(kMaxBlankRun, ' ');
  // At the limit, after each kind of token the parser looks ahead from.
  for (const std::string& text :
       {"a: \"x\"" + at_limit + "\n", "a: [1]" + at_limit + "\n", "{a:" + at_limit + "1}"})
    EXPECT_EQ(load(text).size(), 1u) << text;
  auto e = error_of("a: 1\nb: 'x'" + at_limit + "\t# comment\n");
  EXPECT_EQ(e.line, 2);
  EXPECT_NE(e.message.find("65 spaces or tabs in a row after '''"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("at most 64"), std::string::npos) << e.message;
  EXPECT_EQ(error_of("{\"spec\": {}}" + std::string(1 << 20, ' ')).line, 1)
      << "a megabyte of them would take the parser minutes";
  // Indentation, blank lines and runs after other characters are not where it slows down.
  const std::string wide(4 * kMaxBlankRun, ' ');
  auto docs = load("a:\n" + wide + "b: x" + wide + "y\n" + wide + "\nc: |\n  z" + wide + "\n");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(value(value(docs[0], "a"), "b").scalar(), "x" + wide + "y");
}

}  // namespace
}  // namespace caldera
