#pragma once
// A stream that another host sends here and that says its size first, as
// one line "WORD BYTES" before the data (fetch's runs, a relayed
// checkpoint): it is bounded by what it declared, with room for files that
// grew while they were read, and by the free space here, so that an endless
// or a lying answer stops with a clear error instead of filling the disk.
#include <optional>
#include <string>

#include "base/process.hpp"

namespace ddpctl {

// Bytes this user may still write on the file system of `folder`; -1 when
// it cannot be told.
long long free_bytes(const std::string& folder);

// BYTES of the line "WORD BYTES" (a whole number of at most 15 digits), or
// nullopt when the line is not that.
std::optional<long long> declared_size(const std::string& line, const std::string& word);

// The most a stream that declared `declared` bytes may be: a quarter more,
// and 64 MiB more, for files written while they were read.
long long with_growth(long long declared);

// How a sized stream into `folder` is bounded: its first line must be
// "WORD BYTES"; the bound is with_growth(BYTES) plus that line, refused
// (the stream stopped at once) when the line is not so or when that would
// leave less than 256 MiB free here. `why` (kept by the caller, alive
// while the command runs) says what was refused.
StdoutBound sized_stream_bound(const std::string& word, const std::string& folder, std::string& why);

// The size line for `bytes`: "WORD BYTES\n".
std::string size_line(const std::string& word, long long bytes);

}  // namespace ddpctl
