// Cap'n Proto messages as byte strings: the form they take in CAF messages, RocksDB and sockets.
#pragma once

#include <string>
#include <string_view>

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/array.h>

namespace caldera {

// A builder for the small messages of every pod and job event. Cap'n Proto's default first
// segment is 8 KiB, zeroed on each allocation, several times what such a message takes; one that
// outgrows 2 KiB gets more segments as it needs them.
class SmallMessageBuilder : public capnp::MallocMessageBuilder {
 public:
  SmallMessageBuilder() : capnp::MallocMessageBuilder(kFirstSegmentWords) {}
  static constexpr unsigned kFirstSegmentWords = 256;
};

// The message in standard stream framing (segment table + segments).
std::string to_bytes(capnp::MessageBuilder& message);

// Reads a framed message from bytes of any alignment (it copies them into aligned words first,
// since Cap'n Proto rejects unaligned data). Reading can still throw kj::Exception lazily, on
// field access, for bad pointers or exceeded limits: callers that read untrusted input catch it.
class FlatReader {
 public:
  explicit FlatReader(std::string_view bytes, capnp::ReaderOptions options = {});
  // Reads `bytes` in place when they are word-aligned and whole words (a std::string that holds
  // a to_bytes() message is), and copies them otherwise: for stored bytes that outlive the
  // reader, read often enough (a list of thousands of jobs) that the copy shows.
  struct Borrow {};
  FlatReader(Borrow, std::string_view bytes, capnp::ReaderOptions options = {});
  template <class T>
  typename T::Reader root() {
    return reader_.getRoot<T>();
  }

 private:
  static kj::Array<capnp::word> copy_aligned(std::string_view bytes);
  kj::Array<capnp::word> words_;
  capnp::FlatArrayMessageReader reader_;
};

}  // namespace caldera
