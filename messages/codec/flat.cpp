#include "messages/codec/flat.hpp"

#include <endian.h>

#include <kj/debug.h>

#include <cstdint>
#include <cstring>

namespace caldera {

// The framing capnp::messageToFlatArray writes, written straight into the string: one
// allocation and one copy per message instead of two (every record and message is made here).
std::string to_bytes(capnp::MessageBuilder& message) {
  auto segments = message.getSegmentsForOutput();
  KJ_REQUIRE(segments.size() > 0, "Tried to serialize uninitialized message.");
  // The segment count less one, then each segment's size in words, as little-endian 32-bit
  // numbers, padded with zeros to a whole word.
  const size_t table_words = segments.size() / 2 + 1;
  size_t words = table_words;
  for (auto s : segments) words += s.size();
  std::string out;
  out.reserve(words * sizeof(capnp::word));
  auto put = [&out](size_t n) {
    const uint32_t le = htole32(static_cast<uint32_t>(n));
    out.append(reinterpret_cast<const char*>(&le), sizeof le);
  };
  put(segments.size() - 1);
  for (auto s : segments) put(s.size());
  if (segments.size() % 2 == 0) put(0);
  for (auto s : segments)
    out.append(reinterpret_cast<const char*>(s.begin()), s.size() * sizeof(capnp::word));
  return out;
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
