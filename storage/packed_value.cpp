#include "storage/packed_value.hpp"

#include <cstdint>
#include <cstring>

#include <capnp/serialize-packed.h>
#include <kj/exception.h>
#include <kj/io.h>

namespace caldera {

namespace {

// No Cap'n Proto message starts so: its first four bytes are its segment count less one, at most
// 511, so the last two are zero.
constexpr std::string_view kPacked{
    "\xff\xff"
    "PK",
    4};
constexpr std::string_view kRaw{
    "\xff\xff"
    "RW",
    4};
constexpr size_t kWord = 8;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::string pack_value(std::string_view value) {
  if (value.empty() || value.size() % kWord != 0) {
    if (starts_with(value, kPacked) || starts_with(value, kRaw))
      return std::string(kRaw).append(value);
    return std::string(value);
  }
  // The marker, the unpacked size, then the packed words; packing grows a word by at most one
  // tag byte, and a run of incompressible words by one count byte per 255 words.
  const uint32_t size = static_cast<uint32_t>(value.size());
  const size_t header = kPacked.size() + sizeof(size);
  std::string out(header + value.size() + value.size() / kWord + 8, '\0');
  std::memcpy(out.data(), kPacked.data(), kPacked.size());
  std::memcpy(out.data() + kPacked.size(), &size, sizeof(size));
  kj::ArrayOutputStream array(
      kj::arrayPtr(reinterpret_cast<kj::byte*>(out.data()) + header, out.size() - header));
  {
    capnp::_::PackedOutputStream packed(array);
    packed.write(value.data(), value.size());
  }
  out.resize(header + array.getArray().size());
  return out;
}

std::string unpack_value(std::string_view stored) {
  if (starts_with(stored, kRaw)) return std::string(stored.substr(kRaw.size()));
  uint32_t size = 0;
  if (!starts_with(stored, kPacked) || stored.size() < kPacked.size() + sizeof(size))
    return std::string(stored);
  std::memcpy(&size, stored.data() + kPacked.size(), sizeof(size));
  const auto body = stored.substr(kPacked.size() + sizeof(size));
  // One packed byte stands for at most 256 zero words; a larger size is damage.
  if (size % kWord != 0 || size / kWord > (body.size() + 1) * 256) return std::string(stored);
  std::string out(size, '\0');
  try {
    kj::ArrayInputStream array(
        kj::arrayPtr(reinterpret_cast<const kj::byte*>(body.data()), body.size()));
    capnp::_::PackedInputStream packed(array);
    packed.read(out.data(), out.size());
  } catch (const kj::Exception&) {
    return std::string(stored);
  }
  return out;
}

}  // namespace caldera
