// parsim sim/present — field-table helpers: CSV text of values, JSON paths.
#include "sim/present/fields.hpp"

#include "sim/core/checked.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace parsim {

std::string num17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);  // exact round trip
  return buf;
}

std::string field_text(FieldType type, const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  switch (type) {
    case FieldType::Text: return v.get<std::string>();
    case FieldType::Int: return std::to_string(v.get<std::int64_t>());
    case FieldType::Num: return num17(v.get<double>());
    case FieldType::Bool: return v.get<bool>() ? "true" : "false";
  }
  return "";
}

nlohmann::json field_value(FieldType type, const std::string& text, const std::string& where) {
  switch (type) {
    case FieldType::Text: return text;
    case FieldType::Bool:
      if (text == "true") return true;
      if (text == "false") return false;
      throw InputError(where + ": '" + text + "' is not true or false");
    case FieldType::Int:
    case FieldType::Num: {
      double v = NAN;
      try {
        std::size_t used = 0;
        v = std::stod(text, &used);
        if (used != text.size()) v = NAN;
      } catch (...) {
      }
      // Finite only (NaN ranked fastest in a merge), and an integer column never casts a double such as 1e30 (UB).
      if (!std::isfinite(v)) throw InputError(where + ": '" + shown(text) + "' is not a finite number");
      if (type == FieldType::Num) return v;
      if (const auto i = exact_int64(v)) return *i;
      throw InputError(where + ": '" + shown(text) + "' is not an integer from -2^63 to 2^63-1");
    }
  }
  return nullptr;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
      else if (c == '"') quoted = false;
      else cur += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

void json_set_path(nlohmann::ordered_json& j, const std::string& path, nlohmann::ordered_json v) {
  nlohmann::ordered_json* node = &j;
  std::size_t start = 0;
  for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
    node = &(*node)[path.substr(start, dot - start)];
    start = dot + 1;
  }
  (*node)[path.substr(start)] = std::move(v);
}

void json_flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it.value().is_object()) json_flatten(it.value(), key, out);
    else out[key] = it.value();
  }
}

void fields_check_keys(const std::map<std::string, nlohmann::json>& flat, const std::vector<std::string>& known,
                       const std::vector<std::string>& ignored, const std::string& where) {
  for (const auto& [key, v] : flat) {
    const bool ok = std::find(known.begin(), known.end(), key) != known.end() ||
                    std::find(ignored.begin(), ignored.end(), key) != ignored.end();
    if (!ok) {
      std::string valid;
      for (const auto& k : known) {
        if (!valid.empty()) valid += ", ";
        valid += k;
      }
      throw InputError(where + ": unknown key '" + key + "' (valid keys: " + valid + ")");
    }
  }
}

}  // namespace parsim
