// parsim — text helpers used at the parse boundary.
#pragma once
#include "sim/core/file_io.hpp"

#include <cstdint>
#include <string>
#include <string_view>
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

// Reads a whole file, transparently gunzipping it when it starts with the gzip magic bytes: read_input_file
// (file_io.hpp) with its checks — missing, directory, unreadable, larger than `limit`, corrupt gzip are InputErrors.
std::string read_file_text(const std::string& path, const std::string& what, std::uint64_t limit = kSweepFileLimit);

// ---- text that reaches JSON output or an error message ----
// True when `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF). When it is
// not and `bad_offset` is given, it receives the offset of the first byte of the first bad sequence.
bool is_valid_utf8(std::string_view s, std::size_t* bad_offset = nullptr);
// `s` with each ill-formed UTF-8 sequence replaced by U+FFFD (the Unicode replacement character), so that it can go
// into JSON output: nlohmann::json refuses to serialise invalid UTF-8, and a path, a CSV field or a device name read
// from a file may hold anything.
std::string utf8_sanitize(std::string_view s);
// A value as an error message shows it: valid UTF-8, control characters as \xNN (the message stays one line), cut
// to `max_chars` bytes with "…" so that a 100 MB token cannot flood the terminal.
std::string shown(std::string_view s, std::size_t max_chars = 80);

// Formats a double with `digits` significant digits (for tables).
std::string fmt_num(double v, int digits = 4);
std::string fmt_fixed(double v, int decimals);

}  // namespace parsim
