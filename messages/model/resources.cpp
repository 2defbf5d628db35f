#include "messages/model/resources.hpp"

#include <array>
#include <cctype>
#include <limits>
#include <utility>

namespace caldera {
namespace {

constexpr MilliValue kMax = std::numeric_limits<MilliValue>::max();

// Suffix -> (multiplier numerator, divisor) applied to the milli-value.
struct Suffix {
  std::string_view text;
  __int128 mul;
  __int128 div;
};

constexpr __int128 p2(int n) {
  return static_cast<__int128>(1) << n;
}
constexpr __int128 p10(int n) {
  __int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

constexpr std::array<Suffix, 15> kSuffixes{{
    {"Ki", p2(10), 1},
    {"Mi", p2(20), 1},
    {"Gi", p2(30), 1},
    {"Ti", p2(40), 1},
    {"Pi", p2(50), 1},
    {"Ei", p2(60), 1},
    {"n", 1, p10(9)},
    {"u", 1, p10(6)},
    {"m", 1, p10(3)},
    {"k", p10(3), 1},
    {"M", p10(6), 1},
    {"G", p10(9), 1},
    {"T", p10(12), 1},
    {"P", p10(15), 1},
    {"E", p10(18), 1},
}};

}  // namespace

std::optional<MilliValue> parse_quantity(std::string_view text) {
  size_t i = 0;
  if (i < text.size() && text[i] == '+') ++i;
  // Mantissa as an exact fraction: digits / 10^decimals.
  __int128 digits = 0;
  int decimals = 0;
  bool seen_digit = false, seen_point = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      seen_digit = true;
      if (digits > p10(30)) return std::nullopt;
      digits = digits * 10 + (c - '0');
      if (seen_point) ++decimals;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!seen_digit) return std::nullopt;
  std::string_view rest = text.substr(i);
  __int128 mul = 1000, div = 1;  // to milli-units
  if (!rest.empty() && (rest[0] == 'e' || rest[0] == 'E') && rest.size() > 1) {
    size_t j = 1;
    bool neg = false;
    if (rest[j] == '+' || rest[j] == '-') neg = rest[j++] == '-';
    int exp = 0;
    if (j >= rest.size()) return std::nullopt;
    for (; j < rest.size(); ++j) {
      if (!std::isdigit(static_cast<unsigned char>(rest[j])) || exp > 30) return std::nullopt;
      exp = exp * 10 + (rest[j] - '0');
    }
    if (exp > 30) return std::nullopt;
    if (neg)
      div *= p10(exp);
    else
      mul *= p10(exp);
  } else if (!rest.empty()) {
    bool found = false;
    for (const auto& s : kSuffixes) {
      if (rest == s.text) {
        mul *= s.mul;
        div *= s.div;
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
  }
  div *= p10(decimals);
  if (digits != 0 && mul > (static_cast<__int128>(kMax) * div) / digits + 1) return std::nullopt;
  __int128 value = digits * mul;
  // Round up like Kubernetes does for sub-milli precision.
  __int128 result = (value + div - 1) / div;
  if (result > kMax) return std::nullopt;
  return static_cast<MilliValue>(result);
}

std::string format_quantity(MilliValue value) {
  if (value % 1000 != 0) return std::to_string(value) + "m";
  MilliValue units = value / 1000;
  if (units != 0) {
    static constexpr std::array<std::pair<std::string_view, int>, 6> kBinary{
        {{"Ei", 60}, {"Pi", 50}, {"Ti", 40}, {"Gi", 30}, {"Mi", 20}, {"Ki", 10}}};
    for (const auto& [suffix, shift] : kBinary) {
      MilliValue unit = static_cast<MilliValue>(1) << shift;
      if (units % unit == 0) return std::to_string(units / unit) + std::string(suffix);
    }
  }
  return std::to_string(units);
}

// Saturating: sums of user quantities may exceed int64; clamping keeps a huge request huge (it
// never fits) instead of wrapping into a negative one that would inflate a node's free space.
void ResourceList::add(const ResourceList& other) {
  for (const auto& [k, v] : other.values) {
    auto& mine = values[k];
    if (__builtin_add_overflow(mine, v, &mine)) mine = v > 0 ? kMax : -kMax;
  }
}

void ResourceList::subtract(const ResourceList& other) {
  for (const auto& [k, v] : other.values) {
    auto& mine = values[k];
    if (__builtin_sub_overflow(mine, v, &mine)) mine = v > 0 ? -kMax : kMax;
  }
}

std::string resource_text(const ResourceList& r) {
  std::string out;
  for (const auto& [name, amount] : r.values) {
    if (amount <= 0) continue;
    if (!out.empty()) out += ", ";
    out += name + ' ' + format_quantity(amount);
  }
  return out;
}

bool ResourceList::fits(const ResourceList& request) const {
  for (const auto& [k, v] : request.values)
    if (v < 0 || v > get(k)) return false;
  return true;
}

}  // namespace caldera
