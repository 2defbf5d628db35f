// gtest matchers for Diagnostics: "some problem at this path mentions these words".
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "messages/model/diagnostic.hpp"

namespace caldera {

inline std::string dump(const std::vector<Diagnostic>& list) {
  std::string out;
  for (const auto& d : list) out += "\n  " + to_string(d);
  return out.empty() ? " (none)" : out;
}

// True when some diagnostic has exactly `path` and a message containing `words`.
inline testing::AssertionResult has(const std::vector<Diagnostic>& list, const std::string& path,
                                    const std::string& words) {
  for (const auto& d : list)
    if (d.path == path && d.message.find(words) != std::string::npos)
      return testing::AssertionSuccess();
  return testing::AssertionFailure() << "no diagnostic at \"" << path << "\" mentioning \"" << words
                                     << "\"; got:" << dump(list);
}

}  // namespace caldera
