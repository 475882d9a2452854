#include "sim/core/json_strict.hpp"

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <filesystem>
#include <sstream>

namespace parsim {

nlohmann::json load_json_file(const std::string& path, const std::string& what) {
  std::string text = read_file_text(path, what);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string detail = e.byte >= text.size() ? "unexpected end of file (truncated?)"
                                               : "invalid JSON at byte " + std::to_string(e.byte);
    throw InputError(what + " '" + path + "' is not valid JSON: " + detail);
  }
}

bool looks_like_path(const std::string& s) {
  if (s.find('/') != std::string::npos) return true;
  if (s.size() > 5 && to_lower(s.substr(s.size() - 5)) == ".json") return true;
  std::error_code ec;
  return std::filesystem::is_regular_file(s, ec);
}

StrictObject::StrictObject(const nlohmann::json& obj, std::string context) : obj_(obj), context_(std::move(context)) {
  if (!obj_.is_object()) throw InputError(context_ + ": expected a JSON object");
}

bool StrictObject::has(const std::string& key) const { return obj_.contains(key) && !obj_.at(key).is_null(); }

const nlohmann::json& StrictObject::get(const std::string& key) {
  seen_.insert(key);
  if (!obj_.contains(key)) throw InputError(context_ + ": missing required key '" + key + "'");
  return obj_.at(key);
}

std::int64_t StrictObject::req_int(const std::string& key) {
  const auto& v = get(key);
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d == static_cast<double>(static_cast<std::int64_t>(d))) return static_cast<std::int64_t>(d);
  }
  throw InputError(context_ + ": key '" + key + "' must be an integer, got " + v.dump());
}

double StrictObject::req_num(const std::string& key) {
  const auto& v = get(key);
  if (!v.is_number()) throw InputError(context_ + ": key '" + key + "' must be a number, got " + v.dump());
  return v.get<double>();
}

std::string StrictObject::req_str(const std::string& key) {
  const auto& v = get(key);
  if (!v.is_string()) throw InputError(context_ + ": key '" + key + "' must be a string, got " + v.dump());
  return v.get<std::string>();
}

bool StrictObject::req_bool(const std::string& key) {
  const auto& v = get(key);
  if (!v.is_boolean()) throw InputError(context_ + ": key '" + key + "' must be true or false, got " + v.dump());
  return v.get<bool>();
}

std::int64_t StrictObject::opt_int(const std::string& key, std::int64_t fallback) {
  seen_.insert(key);
  return has(key) ? req_int(key) : fallback;
}
double StrictObject::opt_num(const std::string& key, double fallback) {
  seen_.insert(key);
  return has(key) ? req_num(key) : fallback;
}
std::string StrictObject::opt_str(const std::string& key, const std::string& fallback) {
  seen_.insert(key);
  return has(key) ? req_str(key) : fallback;
}
bool StrictObject::opt_bool(const std::string& key, bool fallback) {
  seen_.insert(key);
  return has(key) ? req_bool(key) : fallback;
}
const nlohmann::json& StrictObject::req_obj(const std::string& key) {
  const auto& v = get(key);
  if (!v.is_object()) throw InputError(context_ + ": key '" + key + "' must be an object");
  return v;
}
void StrictObject::ignore(const std::string& key) { seen_.insert(key); }

void StrictObject::finish(const std::set<std::string>& also_valid) const {
  for (auto it = obj_.begin(); it != obj_.end(); ++it) {
    if (seen_.count(it.key()) || also_valid.count(it.key())) continue;
    std::ostringstream valid;
    bool first = true;
    for (const auto& k : seen_) {
      valid << (first ? "" : ", ") << k;
      first = false;
    }
    throw InputError(context_ + ": unknown key '" + it.key() + "' (valid keys: " + valid.str() + ")");
  }
}

}  // namespace parsim
