// parsim — checked numeric conversions for values read from files and flags.
//
// Casting a double that is out of an integer type's range (1e30, NaN, ±inf) to that type is undefined behaviour in
// C++ ([conv.fpint]: "the behavior is undefined if the truncated value cannot be represented in the destination
// type"), and signed integer overflow is too. Every value that comes from outside goes through these helpers instead
// of a static_cast; they report "does not fit" and leave the wording of the error to the caller, who knows the key.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace parsim {

// The integer a double holds exactly, when it is one and lies in [−2^63, 2^63); nullopt for NaN, ±inf, fractions and
// magnitudes beyond int64. (2^63 itself is representable as a double but not as an int64, hence the strict bound.)
inline std::optional<std::int64_t> exact_int64(double d) {
  constexpr double two63 = 9223372036854775808.0;  // 2^63, exact in binary64
  if (!std::isfinite(d) || d != std::floor(d) || d < -two63 || d >= two63) return std::nullopt;
  return static_cast<std::int64_t>(d);
}

// The double truncated towards zero when the result fits in [lo, hi]; nullopt otherwise (and for NaN).
inline std::optional<std::int64_t> truncate_in(double d, std::int64_t lo, std::int64_t hi) {
  if (!std::isfinite(d)) return std::nullopt;
  const double t = std::trunc(d);
  // Compare in double: lo and hi may round when converted, so check the cast result again afterwards.
  if (t < static_cast<double>(lo) || t > static_cast<double>(hi)) return std::nullopt;
  const auto v = exact_int64(t);
  if (!v || *v < lo || *v > hi) return std::nullopt;
  return v;
}

// v as an int when it fits, else nullopt.
inline std::optional<int> narrow_int(std::int64_t v) {
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(v);
}

// a + b and a · b without signed overflow: nullopt when the exact result does not fit in int64.
inline std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace parsim
