// parsim — small vocabulary types shared by every layer.
//
// Units: internally every quantity is SI in a double — seconds, bytes, FLOPs, bytes per second, FLOP/s. Names carry
// the unit where it is not SI-obvious (`_s`, `_bytes`, `_Bps` = bytes/s, `_flops`). Conversions from the user's units
// (GB/s, Gb/s, GiB, µs, TFLOP/s) happen only at the parse boundary (the *_io.cpp files).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace parsim {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;
constexpr double kMiB = 1024.0 * 1024.0;

enum class Precision { BF16, FP16, FP8, FP32 };
enum class Recompute { None, Selective, Full };

// Bytes of one element of the matrix-multiply inputs at this precision (fp8 GEMMs read 1-byte operands).
double element_bytes(Precision p);
// Bytes of one stored activation element: 2 for the 16-bit and fp8 modes (fp8 recipes keep bf16 activations
// between layers), 4 for fp32.
double activation_element_bytes(Precision p);

std::string to_string(Precision p);
std::string to_string(Recompute r);
// Case-insensitive parsers; throw InputError naming the value and the valid choices.
Precision parse_precision(const std::string& s);
Recompute parse_recompute(const std::string& s);

}  // namespace parsim
