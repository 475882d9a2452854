// parsim — checked file access at the input and output boundary.
//
// Every file argument of every subcommand goes through these functions, so that a directory, a missing or unreadable
// file, a device that never ends (/dev/zero), a gzip bomb or an unwritable output path is one InputError line that
// names the path and the reason — never an exception from the standard library and never an unbounded read.
#pragma once
#include <cstdint>
#include <fstream>
#include <string>

namespace parsim {

constexpr std::uint64_t kMebibyte = std::uint64_t{1} << 20;
// What one input may hold, in bytes (after gunzip). Real files are far below: a model or hardware JSON or a Hugging
// Face config.json is a few KB, an nccl-tests log a few hundred KB, a sweep shard with --all about 2 KB per plan.
constexpr std::uint64_t kConfigFileLimit = 16 * kMebibyte;   // model, config.json, hardware JSON
constexpr std::uint64_t kTextFileLimit = 64 * kMebibyte;     // nccl-tests / rccl-tests logs
constexpr std::uint64_t kSweepFileLimit = 1024 * kMebibyte;  // sweep shards (JSON or CSV)

// "16 MiB", "1 GiB": a limit as the error messages print it.
std::string limit_text(std::uint64_t bytes);

// Checks that `path` names something a reader can open: it exists, is not a directory and not a socket. Throws
// InputError "<what> '<path>' does not exist | is a directory, not a file | cannot be read: <reason>". Used by the
// streaming readers (Kineto traces) that open the file themselves.
void check_input_path(const std::string& path, const std::string& what);

// Reads a whole input file, transparently gunzipping it when it starts with the gzip magic bytes. Regular files, pipes
// (`<(…)`) and character devices are read; reading stops after `limit` bytes (of the file, and again of the inflated
// text), so `--model /dev/zero` or a gzip bomb costs at most `limit` bytes of memory and ends in
// "<what> '<path>' is larger than 16 MiB (the limit for a <what>)". Other failures as check_input_path, plus corrupt
// or truncated gzip.
std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t limit);

// Opens `path` for writing (truncating) and checks that it opened; throws InputError
// "cannot write <what> '<path>': <reason>" (is a directory, permission denied, no such directory, …).
std::ofstream open_output_file(const std::string& path, const std::string& what);
// Writes `content` to `path` through open_output_file and checks that every byte was written (a full disk is an
// InputError too).
void write_output_file(const std::string& path, const std::string& content, const std::string& what);

}  // namespace parsim
