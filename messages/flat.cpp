#include "messages/flat.hpp"

#include <cstring>

namespace caldera {

std::string to_bytes(capnp::MessageBuilder& message) {
  kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

kj::Array<capnp::word> FlatReader::copy_aligned(std::string_view bytes) {
  auto words = kj::heapArray<capnp::word>((bytes.size() + sizeof(capnp::word) - 1) /
                                          sizeof(capnp::word));
  if (!bytes.empty()) {
    std::memset(words.begin(), 0, words.size() * sizeof(capnp::word));
    std::memcpy(words.begin(), bytes.data(), bytes.size());
  }
  return words;
}

FlatReader::FlatReader(std::string_view bytes, capnp::ReaderOptions options)
    : words_(copy_aligned(bytes)), reader_(words_.asPtr(), options) {}

}  // namespace caldera
