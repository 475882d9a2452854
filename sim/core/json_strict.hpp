// parsim — strict JSON reading: unknown keys are errors, every key has a type, every error names file and key.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>

namespace parsim {

// Loads and parses a JSON file. Errors (missing file, not JSON, truncated) throw InputError naming the path.
nlohmann::json load_json_file(const std::string& path, const std::string& what);
// True when `path` looks like a file path rather than a preset name (contains '/' or ends in .json, or exists).
bool looks_like_path(const std::string& s);

// Reads one JSON object field by field and remembers which keys were read; finish() rejects the rest.
class StrictObject {
public:
  StrictObject(const nlohmann::json& obj, std::string context);

  bool has(const std::string& key) const;
  std::int64_t req_int(const std::string& key);
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
