// parsim — text helpers used at the parse boundary.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace parsim {

std::string to_lower(std::string s);
std::string trim(const std::string& s);
std::vector<std::string> split(const std::string& s, char sep);

// Parses a positive integer flag value; throws InputError "<what> must be a positive integer, got '<s>'".
std::int64_t parse_positive_int(const std::string& s, const std::string& what);
// Parses a positive, finite decimal number (all of `s`); throws InputError "<what> must be a positive number, got
// '<s>'".
double parse_positive_number(const std::string& s, const std::string& what);
// Parses a token count such as `2e12`, `300B`, `2T`, `1.5M`, `4096` (suffixes K, M, B/G, T are powers of 1000).
double parse_token_count(const std::string& s, const std::string& what);
// Comma-separated list of positive integers, e.g. `1,2,4,8`.
std::vector<int> parse_int_list(const std::string& s, const std::string& what);

// Reads a whole file, transparently gunzipping it when it starts with the gzip magic bytes.
// Throws InputError when the file does not exist, cannot be read, or is corrupt gzip.
std::string read_file_text(const std::string& path, const std::string& what);

// Formats a double with `digits` significant digits (for tables).
std::string fmt_num(double v, int digits = 4);
std::string fmt_fixed(double v, int decimals);

}  // namespace parsim
