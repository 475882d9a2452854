#include "sim/core/text.hpp"

#include "sim/core/error.hpp"
#include "sim/core/types.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace parsim {

std::string to_lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

std::int64_t parse_positive_int(const std::string& s, const std::string& what) {
  const std::string t = trim(s);
  bool ok = !t.empty() && t.size() <= 18 && std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isdigit(c); });
  std::int64_t v = ok ? std::stoll(t) : 0;
  if (!ok || v <= 0) throw InputError(what + " must be a positive integer, got '" + s + "'");
  return v;
}

double parse_positive_number(const std::string& s, const std::string& what) {
  const std::string t = trim(s);
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(t, &used);
  } catch (...) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v) || !(v > 0))
    throw InputError(what + " must be a positive number, got '" + s + "'");
  return v;
}

double parse_token_count(const std::string& s, const std::string& what) {
  std::string t = trim(s);
  double mult = 1;
  if (!t.empty()) {
    char last = static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
    if (last == 'K') mult = 1e3;
    else if (last == 'M') mult = 1e6;
    else if (last == 'B' || last == 'G') mult = 1e9;
    else if (last == 'T') mult = 1e12;
    if (mult != 1) t.pop_back();
  }
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(t, &used);
  } catch (...) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v) || v <= 0)
    throw InputError(what + " must be a positive number of tokens such as 2e12, 300B or 2T, got '" + s + "'");
  return v * mult;
}

std::vector<int> parse_int_list(const std::string& s, const std::string& what) {
  std::vector<int> out;
  for (const auto& part : split(s, ',')) {
    auto v = parse_positive_int(part, what);
    if (v > 1'000'000'000) throw InputError(what + " value '" + part + "' is too large");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

std::string read_file_text(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(what + " '" + path + "' does not exist or cannot be read");
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f && static_cast<unsigned char>(raw[1]) == 0x8b) {
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 32) != Z_OK) throw InputError(what + " '" + path + "': cannot initialise gzip");
    zs.next_in = reinterpret_cast<Bytef*>(raw.data());
    zs.avail_in = static_cast<uInt>(raw.size());
    std::string out;
    char buf[1 << 16];
    int rc = Z_OK;
    do {
      zs.next_out = reinterpret_cast<Bytef*>(buf);
      zs.avail_out = sizeof buf;
      rc = inflate(&zs, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END) {
        inflateEnd(&zs);
        throw InputError(what + " '" + path + "' is corrupt or truncated gzip");
      }
      out.append(buf, sizeof buf - zs.avail_out);
    } while (rc != Z_STREAM_END);
    inflateEnd(&zs);
    return out;
  }
  return raw;
}

std::string fmt_num(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string fmt_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// ---- types.hpp ----
double element_bytes(Precision p) {
  switch (p) {
    case Precision::FP8: return 1;
    case Precision::FP32: return 4;
    default: return 2;
  }
}
double activation_element_bytes(Precision p) { return p == Precision::FP32 ? 4 : 2; }

std::string to_string(Precision p) {
  switch (p) {
    case Precision::BF16: return "bf16";
    case Precision::FP16: return "fp16";
    case Precision::FP8: return "fp8";
    case Precision::FP32: return "fp32";
  }
  return "?";
}
std::string to_string(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "?";
}
Precision parse_precision(const std::string& s) {
  auto l = to_lower(s);
  if (l == "bf16") return Precision::BF16;
  if (l == "fp16") return Precision::FP16;
  if (l == "fp8") return Precision::FP8;
  if (l == "fp32") return Precision::FP32;
  throw InputError("--precision '" + s + "' is not valid (choose bf16, fp16, fp8 or fp32)");
}
Recompute parse_recompute(const std::string& s) {
  auto l = to_lower(s);
  if (l == "none") return Recompute::None;
  if (l == "selective") return Recompute::Selective;
  if (l == "full") return Recompute::Full;
  throw InputError("--recompute '" + s + "' is not valid (choose none, selective or full)");
}

}  // namespace parsim
