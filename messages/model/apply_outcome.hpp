// What an object's owner did with one document of `caldera apply`: not found (the document is
// created instead), unchanged, configured, or refused with why.
#pragma once

#include <string>

#include "messages/model/diagnostic.hpp"

namespace caldera {

struct ApplyOutcome {
  bool found = false;    // the object exists: the owner updated it or said why not
  bool changed = false;  // its spec changed, durably (configured); false: unchanged or refused
  std::string uid;       // the object's, when found
  Diagnostics diags;     // refusals (errors) and notes, with paths within the document
};

}  // namespace caldera
