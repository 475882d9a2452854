// parsim — strict JSON reading: unknown keys are errors, every key has a type, every error names file and key.
//
// Every JSON file parsim reads (model, Hugging Face config.json, hardware, sweep shards) goes through
// parse_json_text, which adds to nlohmann::json's parser what a strict reader needs:
//   - a key repeated in one object is an error naming the key (RFC 8259 §4 leaves duplicates to the implementation;
//     nlohmann keeps the last value silently, which would hide a typo such as a second "layers");
//   - nesting deeper than kMaxJsonDepth levels is an error (parsim's files need at most 4; a 100,000-level file must
//     not reach code that recurses over the value, such as dump() in an error message);
//   - a number beyond the range of a double (1e400) is an InputError, not nlohmann's out_of_range exception.
// Error messages never print a whole JSON value: describe_json() shows scalars (cut short) and names containers.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace parsim {

constexpr int kMaxJsonDepth = 64;

// Parses `text`; `context` names the source in errors, e.g. "model file 'x.json'". Throws InputError
// "<context> is not valid JSON: …", "<context>: key 'gpu.name' appears twice …", "<context>: … nested deeper …",
// "<context>: the number '1e400' … is out of range".
nlohmann::json parse_json_text(const std::string& text, const std::string& context);
// Loads and parses a JSON file (read_input_file with kConfigFileLimit, then parse_json_text). Errors (missing file,
// directory, too large, not JSON, truncated, repeated key) throw InputError naming the path.
nlohmann::json load_json_file(const std::string& path, const std::string& what);
// True when `s` looks like a file path rather than a preset name: it contains '/', ends in .json, or names something
// that exists (a file, or a directory — which the reader then rejects as "is a directory", not "unknown model").
bool looks_like_path(const std::string& s);
// A JSON value as an error message shows it: scalars as JSON text cut to ~60 characters, containers as "an object
// with N keys" / "an array of N items" — never recursive, never longer than a line.
std::string describe_json(const nlohmann::json& v);
// Serialises JSON output (json or ordered_json). A string that is not valid UTF-8 — a path or a flag as the user typed
// it may hold any bytes — gets U+FFFD in place of each bad byte instead of nlohmann's type_error 316 (which reached
// the user as "internal error").
template <class Json>
std::string dump_output(const Json& j, int indent = 2) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}
// The integer a JSON number holds exactly, when it fits in int64 (1e30, 2.5, 2^64 and non-numbers give nullopt).
std::optional<std::int64_t> json_int64(const nlohmann::json& v);

// Reads one JSON object field by field and remembers which keys were read; finish() rejects the rest.
class StrictObject {
public:
  StrictObject(const nlohmann::json& obj, std::string context);

  bool has(const std::string& key) const;
  std::int64_t req_int(const std::string& key);
  // req_int restricted to [lo, hi]: "key 'k' must be an integer from lo to hi, got v".
  std::int64_t req_int_in(const std::string& key, std::int64_t lo, std::int64_t hi);
  double req_num(const std::string& key);
  std::string req_str(const std::string& key);
  bool req_bool(const std::string& key);
  std::int64_t opt_int(const std::string& key, std::int64_t fallback);
  double opt_num(const std::string& key, double fallback);
  std::string opt_str(const std::string& key, const std::string& fallback);
  bool opt_bool(const std::string& key, bool fallback);
  const nlohmann::json& req_obj(const std::string& key);
  // Marks a key as known without reading it (used for keys that are accepted and ignored, e.g. HF metadata).
  void ignore(const std::string& key);
  // Throws InputError "<context>: unknown key '<k>' (valid keys: ...)" when any key was not read or ignored.
  void finish(const std::set<std::string>& also_valid = {}) const;
  const std::string& context() const { return context_; }

private:
  const nlohmann::json& get(const std::string& key);
  const nlohmann::json& obj_;
  std::string context_;
  std::set<std::string> seen_;
};

}  // namespace parsim
