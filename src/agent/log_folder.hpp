#pragma once
// The log folder as the job's nodes share it (often NFS): what the agent on
// one node sees of the files another node's agent wrote there (the stacks,
// the requests, the step logs), and how it makes sure it sees them soon.
#include <string>

namespace ddpctl {

// A file's size and modification time; size -1 when it is not there.
struct FileStat {
  long long size = -1;
  double mtime = 0;
};
FileStat file_stat(const std::string& path);

// Opens the log folder: on NFS that revalidates its cached entries, so that a
// file another node just created is seen (negative lookups are cached).
void revalidate_folder(const std::string& log_base);

}  // namespace ddpctl
