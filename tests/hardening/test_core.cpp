// sim/core hardening: the strict JSON reader, checked conversions, the file reader and writer, UTF-8 for output.
// Each case is a finding of issue 12 (found by hand, by fuzzing or by the bad-input sweep) kept as a regression test.
#include "sim/core/checked.hpp"
#include "sim/core/error.hpp"
#include "sim/core/file_io.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"

#include "tests/support/errors.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <string>

using namespace parsim;

namespace {

std::string temp_path(const std::string& name) {
  static const auto dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("parsim_hardening_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return (dir / name).string();
}

std::string write(const std::string& name, const std::string& content) {
  const auto p = temp_path(name);
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

using parsim::test::contains;
using parsim::test::error_of;

void one_line(const std::string& msg) {
  INFO(msg);
  CHECK_FALSE(msg.empty());
  CHECK(msg.find('\n') == std::string::npos);
  CHECK(msg.size() < 400);  // never the whole bad value
}

}  // namespace

TEST_CASE("a repeated key is an error naming the key, at any depth") {
  const auto top = error_of([] { (void)parse_json_text(R"({"layers": 2, "layers": 4})", "model file 'm.json'"); });
  one_line(top);
  CHECK(contains(top, "model file 'm.json'"));
  CHECK(contains(top, "'layers' appears twice"));
  const auto deep =
      error_of([] { (void)parse_json_text(R"({"gpu": {"compute": {"num_sms": 1, "num_sms": 2}}})", "hardware file 'h'"); });
  CHECK(contains(deep, "'gpu.compute.num_sms' appears twice"));
  // The same key in two different objects, or in objects inside an array, is fine.
  CHECK_NOTHROW((void)parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})", "f"));
}

TEST_CASE("100,000 levels of nesting end in one line, not a stack overflow") {
  const std::string arrays = std::string(100000, '[') + "1" + std::string(100000, ']');
  const std::string objects = [] {
    std::string s;
    for (int i = 0; i < 100000; ++i) s += "{\"a\":";
    s += "1";
    s += std::string(100000, '}');
    return s;
  }();
  for (const auto& text : {arrays, "{\"layers\": " + arrays + "}", objects}) {
    const auto msg = error_of([&] { (void)parse_json_text(text, "model file 'deep.json'"); });
    one_line(msg);
    CHECK(contains(msg, "nested deeper than 64 levels"));
  }
  // 64 levels are still read (parsim's own files need 4).
  CHECK_NOTHROW((void)parse_json_text(std::string(63, '[') + std::string(63, ']'), "f"));
}

TEST_CASE("numbers beyond a double are InputErrors naming the number") {
  for (const char* text : {R"({"layers": 1e400})", R"({"x": -1e400})", "[1e99999]"}) {
    const auto msg = error_of([&] { (void)parse_json_text(text, "model file 'big.json'"); });
    one_line(msg);
    CHECK(contains(msg, "out of range"));
  }
  CHECK(contains(error_of([] { (void)parse_json_text(R"({"layers": 1e400})", "f"); }), "'1e400'"));
  // A 100,000-digit number is cut short in the message.
  const auto msg = error_of([] { (void)parse_json_text("[" + std::string(100000, '9') + "e9999]", "f"); });
  one_line(msg);
}

TEST_CASE("not JSON and truncated JSON say where") {
  CHECK(contains(error_of([] { (void)parse_json_text("{\"a\": 1", "f"); }), "unexpected end of file"));
  CHECK(error_of([] { (void)parse_json_text("{\"a\": 1,\n x}", "f"); }) ==
        "f is not valid JSON: invalid JSON at line 2, column 2 (byte 10), near 'x}'");
  // The value at fault is shown: NaN is not JSON (RFC 8259 §6).
  CHECK(contains(error_of([] { (void)parse_json_text(R"({"layers": NaN})", "f"); }), "near 'NaN}'"));
  // A bad last character is not "truncated".
  CHECK(contains(error_of([] { (void)parse_json_text(R"({"a": tru})", "f"); }), "column 10 (byte 9), near '}'"));
  // Invalid UTF-8 inside a JSON string is a parse error (RFC 8259 §8.1), not an exception later.
  one_line(error_of([] { (void)parse_json_text("{\"name\": \"\xff\xfe\"}", "f"); }));
}

TEST_CASE("integer keys: exact values only, never a cast of an out-of-range float") {
  const nlohmann::json j = nlohmann::json::parse(
      R"({"a": 4, "b": 4.0, "c": 1e30, "d": 2.5, "e": 18446744073709551615, "f": -9223372036854775808,
          "g": 9223372036854775807, "h": 9.2233720368547758e18, "i": "4"})");
  StrictObject o(j, "f.json");
  CHECK(o.req_int("a") == 4);
  CHECK(o.req_int("b") == 4);
  CHECK(contains(error_of([&] { o.req_int("c"); }), "must be an integer from -2^63 to 2^63-1, got 1e+30"));
  CHECK(contains(error_of([&] { o.req_int("d"); }), "got 2.5"));
  CHECK(contains(error_of([&] { o.req_int("e"); }), "18446744073709551615"));  // 2^64 − 1 does not wrap to −1
  CHECK(o.req_int("f") == INT64_MIN);
  CHECK(o.req_int("g") == INT64_MAX);
  CHECK_FALSE(error_of([&] { o.req_int("h"); }).empty());  // 2^63 as a double: one past INT64_MAX
  CHECK(contains(error_of([&] { o.req_int("i"); }), "must be an integer, got \"4\""));
  CHECK(contains(error_of([&] { o.req_int_in("a", 5, 10); }), "from 5 to 10, got 4"));
}

TEST_CASE("error messages describe a value without printing it whole") {
  nlohmann::json big = nlohmann::json::array();
  for (int i = 0; i < 10000; ++i) big.push_back(i);
  CHECK(describe_json(big) == "an array of 10000 items");
  CHECK(describe_json(nlohmann::json::object()) == "an empty object");
  CHECK(describe_json(std::string(5000, 'x')).size() < 80);
  const nlohmann::json j = {{"layers", big}};
  StrictObject o(j, "f");
  const auto msg = error_of([&] { o.req_int("layers"); });
  one_line(msg);
  CHECK(contains(msg, "got an array of 10000 items"));
}

TEST_CASE("checked conversions") {
  CHECK(exact_int64(3.0) == 3);
  CHECK(exact_int64(-9223372036854775808.0) == INT64_MIN);
  CHECK_FALSE(exact_int64(9223372036854775808.0));  // 2^63
  CHECK_FALSE(exact_int64(1e30));
  CHECK_FALSE(exact_int64(NAN));
  CHECK_FALSE(exact_int64(INFINITY));
  CHECK_FALSE(exact_int64(0.5));
  CHECK(truncate_in(7.9, 0, 10) == 7);
  CHECK_FALSE(truncate_in(1e300, 0, INT64_MAX));
  CHECK(narrow_int(INT_MAX) == INT_MAX);
  CHECK_FALSE(narrow_int(std::int64_t{INT_MAX} + 1));
  CHECK_FALSE(checked_add(INT64_MAX, 1));
  CHECK(checked_add(-2, 1) == -1);
  CHECK_FALSE(checked_mul(INT64_MAX / 2 + 1, 2));
}

TEST_CASE("UTF-8: validation, sanitising for JSON output, values in messages") {
  CHECK(is_valid_utf8("plain ASCII"));
  CHECK(is_valid_utf8("µs ≥ 0 — 日本"));
  std::size_t bad = 0;
  CHECK_FALSE(is_valid_utf8("ab\xff", &bad));
  CHECK(bad == 2);
  CHECK_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));      // a UTF-16 surrogate
  CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xe2\x82"));          // truncated sequence
  CHECK(utf8_sanitize("a\xff" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(utf8_sanitize("\xe2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  // What nlohmann::json refuses to serialise (type_error 316), the sanitised string serialises.
  const std::string raw = "dir\xff\xfe/x";
  CHECK_THROWS(nlohmann::json(raw).dump());
  CHECK_NOTHROW(nlohmann::json(utf8_sanitize(raw)).dump());
  CHECK(shown("a\nb") == "a\\x0Ab");
  CHECK(shown(std::string(1000, 'x'), 20) == std::string(20, 'x') + "\xE2\x80\xA6");
  CHECK(is_valid_utf8(shown("\xe6\x97\xa5\xe6\x97\xa5", 4)));  // not cut inside a character
}

TEST_CASE("the file reader: missing, directory, unreadable, too large, devices, gzip bombs") {
  CHECK(contains(error_of([] { read_input_file(temp_path("nope.json"), "model file", kConfigFileLimit); }),
                 "does not exist"));
  const auto dir = temp_path("adir");
  std::filesystem::create_directories(dir);
  const auto d = error_of([&] { read_input_file(dir, "model file", kConfigFileLimit); });
  one_line(d);
  CHECK(contains(d, "model file '" + dir + "' is a directory, not a file"));
  CHECK(contains(error_of([] { read_input_file("", "model file", 10); }), "path is empty"));
  // /dev/zero never ends: the read stops at the limit and says it.
  const auto z = error_of([] { read_input_file("/dev/zero", "model file", kConfigFileLimit); });
  CHECK(z == "model file '/dev/zero' is larger than 16 MiB (the limit for a model file)");
  // A regular file over the limit is refused from its size, before reading.
  const auto big = write("big.txt", std::string(2000, 'x'));
  CHECK(contains(error_of([&] { read_input_file(big, "benchmark file", 1000); }),
                 "is larger than 1000 bytes (the limit for a benchmark file)"));
  CHECK(read_input_file(big, "f", 2000).size() == 2000);
  // A gzip bomb: 64 MiB of zeros compress to ~64 KB; inflating stops at the limit.
  {
    const auto gz = temp_path("bomb.gz");
    gzFile f = gzopen(gz.c_str(), "wb9");
    const std::string mib(1 << 20, '\0');
    for (int i = 0; i < 64; ++i) gzwrite(f, mib.data(), static_cast<unsigned>(mib.size()));
    gzclose(f);
    CHECK(contains(error_of([&] { read_input_file(gz, "model file", kConfigFileLimit); }),
                   "is larger than 16 MiB once decompressed"));
  }
  if (::geteuid() != 0) {  // root reads everything
    const auto locked = write("locked.json", "{}");
    ::chmod(locked.c_str(), 0);
    CHECK(contains(error_of([&] { read_input_file(locked, "model file", 100); }), "cannot be read: Permission denied"));
  }
}

TEST_CASE("the output writer: directory, missing parent, full disk") {
  const auto dir = temp_path("outdir");
  std::filesystem::create_directories(dir);
  CHECK(error_of([&] { write_output_file(dir, "x", "--out file"); }) ==
        "cannot write --out file '" + dir + "': it is a directory");
  CHECK(contains(error_of([&] { write_output_file(temp_path("no/such/dir/f.json"), "x", "--out file"); }),
                 "No such file or directory"));
  if (std::filesystem::exists("/dev/full"))
    CHECK(contains(error_of([] { write_output_file("/dev/full", std::string(1 << 16, 'x'), "--out file"); }),
                   "No space left on device"));
  const auto ok = temp_path("ok.json");
  write_output_file(ok, "{}\n", "--out file");
  CHECK(read_input_file(ok, "f", 100) == "{}\n");
}

TEST_CASE("looks_like_path: a directory named like a preset is a path, so the error says 'is a directory'") {
  const auto old = std::filesystem::current_path();
  std::filesystem::current_path(temp_path(""));
  std::filesystem::create_directories("adir2");
  CHECK(looks_like_path("adir2"));
  CHECK_FALSE(looks_like_path("llama7b"));
  CHECK_FALSE(looks_like_path(""));
  CHECK(looks_like_path("x.json"));
  std::filesystem::current_path(old);
}

TEST_CASE("a token count beyond a double once its suffix applies is an InputError (--tokens 1e308T)") {
  // 1e308 is finite; × 1e12 (T) it is not, and the training time came out infinite.
  CHECK(error_of([] { parse_token_count("1e308T", "--tokens"); }) ==
        "--tokens must be a positive number of tokens such as 2e12, 300B or 2T, got '1e308T'");
  CHECK(parse_token_count("1e290T", "--tokens") == doctest::Approx(1e302));
  CHECK(parse_token_count("2T", "--tokens") == 2e12);
}

