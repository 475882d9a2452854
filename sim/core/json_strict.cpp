#include "sim/core/json_strict.hpp"

#include "sim/core/checked.hpp"
#include "sim/core/error.hpp"
#include "sim/core/file_io.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <sstream>
#include <vector>

namespace parsim {

namespace {

using json = nlohmann::json;

// Line number (1-based) of byte `offset` in `text`.
std::size_t line_of(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

// The text between the first pair of single quotes of an nlohmann message ("number overflow parsing '1e400'").
std::string quoted_token(const std::string& what) {
  const auto a = what.find('\'');
  const auto b = a == std::string::npos ? a : what.find('\'', a + 1);
  if (b == std::string::npos) return {};
  return what.substr(a + 1, b - a - 1);
}

}  // namespace

json parse_json_text(const std::string& text, const std::string& context) {
  // One level per open object or array; for objects the keys seen so far and the current one (for the key's path).
  struct Level {
    bool object = false;
    std::set<std::string> keys;
    std::string current;
  };
  std::vector<Level> stack;
  auto path_to = [&](const std::string& key) {
    std::string p;
    for (std::size_t i = 0; i + 1 < stack.size(); ++i) {
      if (stack[i].object) p += stack[i].current + ".";
      else p += "[].";
    }
    return p + key;
  };
  const json::parser_callback_t check = [&](int /*depth*/, json::parse_event_t event, json& parsed) -> bool {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (stack.size() >= static_cast<std::size_t>(kMaxJsonDepth))
          throw InputError(context + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                           " levels (parsim's files need at most a few)");
        stack.push_back({event == json::parse_event_t::object_start, {}, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case json::parse_event_t::key:
        if (!stack.empty() && parsed.is_string()) {
          Level& top = stack.back();
          const std::string& k = parsed.get_ref<const std::string&>();
          if (!top.keys.insert(k).second)
            throw InputError(context + ": key '" + shown(path_to(k)) +
                             "' appears twice in the same object (each key may be given once)");
          top.current = k;
        }
        break;
      case json::parse_event_t::value:
        break;
    }
    return true;
  };
  try {
    return json::parse(text, check, /*allow_exceptions=*/true);
  } catch (const json::parse_error& e) {
    // e.byte counts the characters read, the offending one included (1-based); reading past the end counts one more.
    if (e.byte == 0 || e.byte > text.size()) throw InputError(context + " is not valid JSON: unexpected end of file (truncated?)");
    const std::size_t at = e.byte - 1;
    const std::size_t line_start = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
    const std::size_t column = line_start == std::string::npos ? at + 1 : at - line_start;
    throw InputError(context + " is not valid JSON: invalid JSON at line " + std::to_string(line_of(text, at)) +
                     ", column " + std::to_string(column) + " (byte " + std::to_string(at) + "), near '" +
                     shown(text.substr(at, 24), 20) + "'");
  } catch (const json::out_of_range& e) {
    // 406: "number overflow parsing '1e400'" — a number beyond ±1.8e308.
    const std::string token = quoted_token(e.what());
    throw InputError(context + ": the number " + (token.empty() ? std::string("in the file") : "'" + shown(token, 40) + "'") +
                     " is out of range (JSON numbers must be finite doubles, |x| < 1.8e308)");
  } catch (const json::exception& e) {
    throw InputError(context + " could not be read as JSON: " + shown(e.what(), 120));
  }
}

json load_json_file(const std::string& path, const std::string& what) {
  const std::string text = read_input_file(path, what, kConfigFileLimit);
  return parse_json_text(text, what + " '" + path + "'");
}

bool looks_like_path(const std::string& s) {
  if (s.find('/') != std::string::npos) return true;
  if (s.size() > 5 && to_lower(s.substr(s.size() - 5)) == ".json") return true;
  std::error_code ec;
  return !s.empty() && std::filesystem::exists(s, ec);
}

std::string describe_json(const json& v) {
  switch (v.type()) {
    case json::value_t::object: return v.empty() ? "an empty object" : "an object with " + std::to_string(v.size()) + " keys";
    case json::value_t::array: return v.empty() ? "an empty array" : "an array of " + std::to_string(v.size()) + " items";
    case json::value_t::string: {
      std::string q(1, '"');  // built by appending: GCC 12 warns falsely (-Wrestrict) on "\"" + std::string
      q.append(shown(v.get_ref<const std::string&>(), 60));
      q.push_back('"');
      return q;
    }
    case json::value_t::discarded: return "nothing";
    default: return shown(v.dump(), 60);  // a scalar: dump() does not recurse
  }
}

std::optional<std::int64_t> json_int64(const json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) return exact_int64(v.get<double>());
  return std::nullopt;
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
  if (const auto i = json_int64(v)) return *i;
  if (v.is_number())
    throw InputError(context_ + ": key '" + key + "' must be an integer from -2^63 to 2^63-1, got " + describe_json(v));
  throw InputError(context_ + ": key '" + key + "' must be an integer, got " + describe_json(v));
}

std::int64_t StrictObject::req_int_in(const std::string& key, std::int64_t lo, std::int64_t hi) {
  const std::int64_t v = req_int(key);
  if (v < lo || v > hi)
    throw InputError(context_ + ": key '" + key + "' must be an integer from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", got " + std::to_string(v));
  return v;
}

double StrictObject::req_num(const std::string& key) {
  const auto& v = get(key);
  if (!v.is_number()) throw InputError(context_ + ": key '" + key + "' must be a number, got " + describe_json(v));
  return v.get<double>();
}

std::string StrictObject::req_str(const std::string& key) {
  const auto& v = get(key);
  if (!v.is_string()) throw InputError(context_ + ": key '" + key + "' must be a string, got " + describe_json(v));
  return v.get<std::string>();
}

bool StrictObject::req_bool(const std::string& key) {
  const auto& v = get(key);
  if (!v.is_boolean()) throw InputError(context_ + ": key '" + key + "' must be true or false, got " + describe_json(v));
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
    throw InputError(context_ + ": unknown key '" + shown(it.key()) + "' (valid keys: " + valid.str() + ")");
  }
}

}  // namespace parsim
