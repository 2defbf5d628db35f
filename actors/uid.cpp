#include "actors/uid.hpp"

#include <random>

namespace caldera {

std::string random_uid() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string s;
  s.reserve(36);
  uint64_t a = rng(), b = rng();
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) s.push_back('-');
    uint64_t word = i < 16 ? a : b;
    s.push_back(hex[(word >> ((i % 16) * 4)) & 15]);
  }
  return s;
}

}  // namespace caldera
