// Problems found in user input, each with the field path it concerns.
#pragma once

#include <string>
#include <vector>

namespace caldera {

struct Diagnostic {
  std::string path;     // e.g. "spec.tasks[1].replicas"; "" for the whole document
  std::string message;  // what is wrong and why, in one sentence
};

// Errors reject the input; warnings are reported back but let it through.
struct Diagnostics {
  std::vector<Diagnostic> errors;
  std::vector<Diagnostic> warnings;

  void error(std::string path, std::string message) {
    errors.push_back({std::move(path), std::move(message)});
  }
  void warn(std::string path, std::string message) {
    warnings.push_back({std::move(path), std::move(message)});
  }
  bool ok() const { return errors.empty(); }
};

// "path: message", or just the message when there is no path.
std::string to_string(const Diagnostic& d);

// `path` under a document prefix ("documents[2]." or ""): ("documents[2].", "") -> "documents[2]".
inline std::string prefixed(const std::string& prefix, const std::string& path) {
  if (path.empty() && !prefix.empty()) return prefix.substr(0, prefix.size() - 1);  // no dot
  return prefix + path;
}

}  // namespace caldera
