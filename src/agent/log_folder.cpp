#include "agent/log_folder.hpp"

#include <dirent.h>
#include <sys/stat.h>

namespace ddpctl {

FileStat file_stat(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {static_cast<long long>(st.st_size),
          static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) / 1e9};
}

void revalidate_folder(const std::string& log_base) {
  size_t slash = log_base.rfind('/');
  if (DIR* d = ::opendir(slash == std::string::npos ? "." : log_base.substr(0, slash).c_str())) ::closedir(d);
}

}  // namespace ddpctl
