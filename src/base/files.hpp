#pragma once
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace ddpctl {

// Reads a whole file; throws UserError naming the path when it cannot be read
// or is larger than `max_bytes`.
std::string read_file(const std::string& path, size_t max_bytes = 1 << 20);

// The lines of a log's last `max_bytes` (logs can be large; the tail is what
// matters): '\n' and '\r' both end a line, empty lines are dropped. None when
// the file cannot be read.
// `from`: no byte before this offset (what a file held before an in-job
// restart appended to it).
std::vector<std::string> tail_lines(const std::string& path, size_t max_bytes = 4 << 20, long long from = 0);

// Writes `content` to `path` atomically: a temporary file in the same folder is
// written, flushed to disk and renamed over `path`, so readers see the old file
// or the new one, never a part. Throws UserError on failure.
void write_file_atomic(const std::string& path, const std::string& content, mode_t mode = 0644);
// Creates `path` whole with `content` unless it exists (written aside, then
// linked into place: of two writers only one creates it, and no reader sees
// a part). True when this call created it; throws UserError on failure.
bool write_file_exclusive(const std::string& path, const std::string& content);
// Many files under one folder (names relative to it, their folders made),
// each written atomically as above when it comes, and flushed to disk all at
// once by commit(): one syncfs instead of two fsyncs a file (a grid's
// 100,000 cell scripts). After commit() every file and its rename are on
// disk. Throws UserError.
class FileBatch {
 public:
  FileBatch(std::string dir, mode_t mode);
  void write(const std::string& name, const std::string& content);
  void commit();

 private:
  std::string dir_, made_;  // made_: the last folder made (files come folder by folder)
  mode_t mode_;
};
void write_files_atomic(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files,
                        mode_t mode);

// `p` made absolute (against the working directory) and normalized; `p`
// itself when that cannot be done.
std::string absolute_path(const std::string& p);

// A fresh folder under the system's temporary directory (prefix-XXXXXX),
// removed with everything in it when this goes out of scope.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace ddpctl
