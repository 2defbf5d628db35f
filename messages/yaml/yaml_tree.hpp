// YAML documents as trees of plain values, read with libfyaml (about five times faster than
// yaml-cpp at the documents clients submit, which mattered at thousands of submissions a second).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace caldera {

struct YamlData;

// One node of a document: a shared, immutable value (an alias shares the node it names).
class YamlNode {
 public:
  YamlNode() = default;  // undefined: no such node
  explicit YamlNode(std::shared_ptr<const YamlData> data) : data_(std::move(data)) {}

  bool defined() const { return data_ != nullptr; }
  bool is_null() const;  // `~`, `null`, or nothing at all, unquoted and untagged
  bool is_scalar() const;
  bool is_sequence() const;
  bool is_map() const;
  // A scalar written without quotes or block style: it may be a number. Quoted ones are strings.
  bool plain() const;
  // An explicit tag, resolved ("tag:yaml.org,2002:int" for "!!int", "!x" for "!x"), else "".
  const std::string& tag() const;
  const std::string& scalar() const;
  const std::vector<YamlNode>& items() const;                         // a sequence's
  const std::vector<std::pair<YamlNode, YamlNode>>& entries() const;  // a mapping's, in order

 private:
  std::shared_ptr<const YamlData> data_;
};

struct YamlData {
  enum class Kind { Null, Scalar, Sequence, Map };
  Kind kind = Kind::Null;
  bool plain = true;
  std::string tag;
  std::string scalar;
  std::vector<YamlNode> items;
  std::vector<std::pair<YamlNode, YamlNode>> entries;
};

struct YamlLoadError {
  int line = 0;  // 1-based; 0 when unknown
  std::string message;
  bool too_deep = false;  // the nesting limit, not the syntax
};

// The longest run of spaces or tabs taken right after a quote, ']', '}' or ':' (after anything
// else, in indentation and on blank lines, runs may be longer).
inline constexpr size_t kMaxBlankRun = 64;

// Every document of the text, in order (an empty document is a null node). A longer run of blanks
// than kMaxBlankRun where the parser would slow down is refused at its line. Collections nested
// deeper than `max_depth` are refused at the line where the first one too deep opens, before any
// more is read. An alias may only name a node that is complete, so documents hold no cycles.
std::variant<std::vector<YamlNode>, YamlLoadError> load_yaml(std::string_view text, int max_depth);

}  // namespace caldera
