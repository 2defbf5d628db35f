#include "messages/yaml/yaml_tree.hpp"

#include <libfyaml.h>

#include <optional>
#include <unordered_map>

namespace caldera {
namespace {

const std::vector<YamlNode> kNoItems;
const std::vector<std::pair<YamlNode, YamlNode>> kNoEntries;
const std::string kNoText;

std::string text_of(fy_token* token) {
  if (token == nullptr) return {};
  size_t len = 0;
  const char* text = fy_token_get_text(token, &len);
  return text != nullptr ? std::string(text, len) : std::string();
}

int line_of(fy_event* event) {
  const fy_mark* mark = fy_event_start_mark(event);
  return mark != nullptr ? mark->line + 1 : 0;
}

// YAML 1.2's core schema nulls (yaml-cpp reads the same), for plain scalars without a tag.
bool null_text(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// Owns the parser and its diagnostics, whatever way the load ends.
struct Parser {
  fy_diag* diag = nullptr;
  fy_parser* parser = nullptr;
  ~Parser() {
    if (parser != nullptr) fy_parser_destroy(parser);
    if (diag != nullptr) fy_diag_destroy(diag);
  }
};

// The parser's first error, with its line.
YamlLoadError parse_error(fy_diag* diag) {
  YamlLoadError out;
  out.message = "the text is not valid YAML";
  void* iter = nullptr;
  if (fy_diag_error* e = diag != nullptr ? fy_diag_errors_iterate(diag, &iter) : nullptr) {
    out.line = e->line;  // 1-based here, unlike marks
    if (e->msg != nullptr) out.message = e->msg;
  }
  return out;
}

// Builds one document at a time from the parser's events.
class Builder {
 public:
  explicit Builder(int max_depth) : max_depth_(max_depth) {}

  // Returns an error, or nullopt to go on.
  std::optional<YamlLoadError> on(fy_event* ev) {
    switch (ev->type) {
      case FYET_DOCUMENT_START:
        anchors_.clear();  // anchors belong to their document
        root_ = YamlNode();
        return std::nullopt;
      case FYET_DOCUMENT_END:
        docs_.push_back(root_.defined() ? root_ : YamlNode(std::make_shared<YamlData>()));
        return std::nullopt;
      case FYET_SCALAR: {
        auto d = std::make_shared<YamlData>();
        d->scalar = text_of(ev->scalar.value);
        d->plain = fy_token_scalar_style(ev->scalar.value) == FYSS_PLAIN;
        // A tag token is there only when one was written (tag_implicit is not reliably set).
        d->tag = text_of(ev->scalar.tag);
        d->kind = d->plain && d->tag.empty() && null_text(d->scalar) ? YamlData::Kind::Null
                                                                     : YamlData::Kind::Scalar;
        YamlNode node(d);
        if (ev->scalar.anchor != nullptr) anchors_[text_of(ev->scalar.anchor)] = node;
        return add(std::move(node));
      }
      case FYET_SEQUENCE_START:
      case FYET_MAPPING_START: {
        bool seq = ev->type == FYET_SEQUENCE_START;
        if (static_cast<int>(open_.size()) >= max_depth_) {
          return YamlLoadError{line_of(ev), "too deep", true};
        }
        Open o;
        o.data = std::make_shared<YamlData>();
        o.data->kind = seq ? YamlData::Kind::Sequence : YamlData::Kind::Map;
        fy_token* tag = seq ? ev->sequence_start.tag : ev->mapping_start.tag;
        fy_token* anchor = seq ? ev->sequence_start.anchor : ev->mapping_start.anchor;
        o.data->tag = text_of(tag);
        o.anchor = text_of(anchor);
        open_.push_back(std::move(o));
        return std::nullopt;
      }
      case FYET_SEQUENCE_END:
      case FYET_MAPPING_END: {
        if (open_.empty()) return YamlLoadError{line_of(ev), "unbalanced collection end"};
        Open o = std::move(open_.back());
        open_.pop_back();
        YamlNode node(o.data);
        if (!o.anchor.empty()) anchors_[o.anchor] = node;  // complete only now
        return add(std::move(node));
      }
      case FYET_ALIAS: {
        std::string name = text_of(ev->alias.anchor);
        auto it = anchors_.find(name);
        if (it == anchors_.end())
          return YamlLoadError{line_of(ev), "alias *" + name +
                                                " names no complete node before it (an anchor "
                                                "must be defined, and closed, first)"};
        return add(it->second);
      }
      default:
        return std::nullopt;
    }
  }

  std::vector<YamlNode> take() { return std::move(docs_); }

 private:
  struct Open {
    std::shared_ptr<YamlData> data;
    std::string anchor;
    std::optional<YamlNode> key;  // a mapping's key, awaiting its value
  };

  std::optional<YamlLoadError> add(YamlNode node) {
    if (open_.empty()) {
      root_ = std::move(node);
      return std::nullopt;
    }
    Open& top = open_.back();
    if (top.data->kind == YamlData::Kind::Sequence) {
      top.data->items.push_back(std::move(node));
    } else if (!top.key) {
      top.key = std::move(node);
    } else {
      top.data->entries.emplace_back(std::move(*top.key), std::move(node));
      top.key.reset();
    }
    return std::nullopt;
  }

  int max_depth_;
  std::vector<Open> open_;
  std::unordered_map<std::string, YamlNode> anchors_;
  YamlNode root_;
  std::vector<YamlNode> docs_;
};

}  // namespace

bool YamlNode::is_null() const {
  return data_ && data_->kind == YamlData::Kind::Null;
}
bool YamlNode::is_scalar() const {
  return data_ && data_->kind == YamlData::Kind::Scalar;
}
bool YamlNode::is_sequence() const {
  return data_ && data_->kind == YamlData::Kind::Sequence;
}
bool YamlNode::is_map() const {
  return data_ && data_->kind == YamlData::Kind::Map;
}
bool YamlNode::plain() const {
  return data_ && data_->plain;
}
const std::string& YamlNode::tag() const {
  return data_ ? data_->tag : kNoText;
}
const std::string& YamlNode::scalar() const {
  return data_ ? data_->scalar : kNoText;
}
const std::vector<YamlNode>& YamlNode::items() const {
  return data_ ? data_->items : kNoItems;
}
const std::vector<std::pair<YamlNode, YamlNode>>& YamlNode::entries() const {
  return data_ ? data_->entries : kNoEntries;
}

std::optional<YamlLoadError> long_blank_run(std::string_view text) {
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') ++line;
    if (text[i] != ' ' && text[i] != '\t') continue;
    size_t end = text.find_first_not_of(" \t", i);
    if (end == std::string_view::npos) end = text.size();
    const size_t run = end - i;
    const char before = i > 0 ? text[i - 1] : '\n';
    if (run > kMaxBlankRun && std::string_view("\"']}:").find(before) != std::string_view::npos)
      return YamlLoadError{line, std::to_string(run) + " spaces or tabs in a row after '" +
                                     std::string(1, before) + "'; at most " +
                                     std::to_string(kMaxBlankRun) + " are taken there"};
    i = end - 1;
  }
  return std::nullopt;
}

std::variant<std::vector<YamlNode>, YamlLoadError> load_yaml(std::string_view text, int max_depth) {
  // libfyaml looks ahead through the blanks after a quoted scalar, a flow collection or a
  // colon from each of them (is a ':' coming?): a long run costs the square of its length, and
  // 32 KB of blanks a second. Such runs are refused before they are read.
  if (auto error = long_blank_run(text)) return *error;
  Parser p;
  fy_diag_cfg dcfg;
  fy_diag_cfg_default(&dcfg);
  dcfg.fp = nullptr;
  dcfg.output_fn = [](fy_diag*, void*, const char*, size_t) {};  // collected, not printed
  p.diag = fy_diag_create(&dcfg);
  if (p.diag != nullptr) fy_diag_set_collect_errors(p.diag, true);
  fy_parse_cfg cfg{};
  cfg.flags =
      static_cast<fy_parse_cfg_flags>(FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_DISABLE_DEPTH_LIMIT);
  cfg.diag = p.diag;
  p.parser = fy_parser_create(&cfg);
  if (p.parser == nullptr || p.diag == nullptr)
    return YamlLoadError{0, "cannot start the YAML parser (out of memory?)"};
  if (fy_parser_set_string(p.parser, text.data(), text.size()) != 0)
    return YamlLoadError{0, "cannot read the text"};
  Builder builder(max_depth);
  while (fy_event* ev = fy_parser_parse(p.parser)) {
    auto error = builder.on(ev);
    fy_parser_event_free(p.parser, ev);
    if (error) return *error;
  }
  if (fy_parser_get_stream_error(p.parser)) return parse_error(p.diag);
  return builder.take();
}

}  // namespace caldera
