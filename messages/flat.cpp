#include "messages/flat.hpp"

#include <cstdint>
#include <cstring>

namespace caldera {

std::string to_bytes(capnp::MessageBuilder& message) {
  kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

kj::Array<capnp::word> FlatReader::copy_aligned(std::string_view bytes) {
  auto words =
      kj::heapArray<capnp::word>((bytes.size() + sizeof(capnp::word) - 1) / sizeof(capnp::word));
  if (!bytes.empty()) {
    std::memset(&words.back(), 0, sizeof(capnp::word));  // the padding of a partial last word
    std::memcpy(words.begin(), bytes.data(), bytes.size());
  }
  return words;
}

FlatReader::FlatReader(std::string_view bytes, capnp::ReaderOptions options)
    : words_(copy_aligned(bytes)), reader_(words_.asPtr(), options) {}

namespace {

bool whole_words(std::string_view bytes) {
  return reinterpret_cast<uintptr_t>(bytes.data()) % alignof(capnp::word) == 0 &&
         bytes.size() % sizeof(capnp::word) == 0;
}

kj::ArrayPtr<const capnp::word> as_words(std::string_view bytes) {
  return {reinterpret_cast<const capnp::word*>(bytes.data()), bytes.size() / sizeof(capnp::word)};
}

}  // namespace

FlatReader::FlatReader(Borrow, std::string_view bytes, capnp::ReaderOptions options)
    : words_(whole_words(bytes) ? kj::Array<capnp::word>() : copy_aligned(bytes)),
      reader_(words_.size() > 0 ? words_.asPtr() : as_words(bytes), options) {}

}  // namespace caldera
