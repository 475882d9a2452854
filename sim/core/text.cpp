#include "sim/core/text.hpp"

#include "sim/core/error.hpp"
#include "sim/core/types.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
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
  if (!ok || v <= 0) throw InputError(what + " must be a positive integer, got '" + shown(s) + "'");
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
    throw InputError(what + " must be a positive number, got '" + shown(s) + "'");
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
  // v·mult, not just v, must be finite: 1e308T is beyond a double (it gave an infinite training time).
  if (t.empty() || used != t.size() || !std::isfinite(v) || v <= 0 || !std::isfinite(v * mult))
    throw InputError(what + " must be a positive number of tokens such as 2e12, 300B or 2T, got '" + shown(s) + "'");
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

std::string read_file_text(const std::string& path, const std::string& what, std::uint64_t limit) {
  return read_input_file(path, what, limit);
}

bool is_valid_utf8(std::string_view s, std::size_t* bad_offset) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte (RFC 3629 §4)
    if (c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;  // no UTF-16 surrogates
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;  // nothing above U+10FFFF
    bool ok = len > 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    }
    if (!ok) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    i += len;
  }
  return true;
}

std::string utf8_sanitize(std::string_view s) {
  std::size_t bad = 0;
  if (is_valid_utf8(s, &bad)) return std::string(s);
  std::string out(s.substr(0, bad));
  std::size_t i = bad;
  while (i < s.size()) {
    std::size_t next_bad = 0;
    const std::string_view rest = s.substr(i);
    if (is_valid_utf8(rest, &next_bad)) {
      out.append(rest);
      break;
    }
    out.append(rest.substr(0, next_bad));
    out.append("\xEF\xBF\xBD");  // U+FFFD for one ill-formed byte, then resynchronise on the next
    i += next_bad + 1;
  }
  return out;
}

std::string shown(std::string_view s, std::size_t max_chars) {
  const bool cut = s.size() > max_chars;
  if (cut) {
    std::size_t end = max_chars;  // do not split a UTF-8 sequence
    while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
    s = s.substr(0, end);
  }
  std::string out;
  for (char ch : utf8_sanitize(s)) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  if (cut) out += "\xE2\x80\xA6";  // …
  return out;
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
    case Recompute::Op: return "op";
  }
  return "?";
}
Precision parse_precision(const std::string& s) {
  auto l = to_lower(s);
  if (l == "bf16") return Precision::BF16;
  if (l == "fp16") return Precision::FP16;
  if (l == "fp8") return Precision::FP8;
  if (l == "fp32") return Precision::FP32;
  throw InputError("--precision '" + shown(s) + "' is not valid (choose bf16, fp16, fp8 or fp32)");
}
Recompute parse_recompute(const std::string& s) {
  auto l = to_lower(s);
  if (l == "none") return Recompute::None;
  if (l == "selective") return Recompute::Selective;
  if (l == "full") return Recompute::Full;
  if (l == "op") return Recompute::Op;
  throw InputError("--recompute '" + shown(s) + "' is not valid (choose none, selective, full or op)");
}

std::string to_string(RecomputeModules r) {
  std::string out;
  for (const RecomputeModuleName& n : kRecomputeModuleNames)
    if (r.has(n.module)) {
      if (!out.empty()) out += ',';
      out += n.name;
    }
  return out;
}
RecomputeModules parse_recompute_modules(const std::string& s) {
  std::string valid;
  for (const RecomputeModuleName& n : kRecomputeModuleNames) {
    if (!valid.empty()) valid += ", ";
    valid += n.name;
  }
  RecomputeModules r{0u};
  std::string word;
  auto take = [&](const std::string& w) {
    if (w.empty()) return;
    const std::string l = to_lower(w);
    for (const RecomputeModuleName& n : kRecomputeModuleNames)
      if (l == n.name) {
        r.bits |= static_cast<unsigned>(n.module);
        return;
      }
    throw InputError("--recompute-modules: '" + shown(w) + "' is not a module (choose from " + valid + ")");
  };
  for (char ch : s) {
    if (ch == ',' || ch == ' ') {
      take(word);
      word.clear();
    } else {
      word += ch;
    }
  }
  take(word);
  if (r.bits == 0u)
    throw InputError("--recompute-modules '" + shown(s) + "' names no module (choose one or more of " + valid + ")");
  return r;
}

}  // namespace parsim
