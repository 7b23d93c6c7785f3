#include "race/race_checkpoint.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <istream>
#include <sstream>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/sized_stream.hpp"
#include "base/tar_archive.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

long long blocks(long long bytes) { return (bytes + 511) / 512 * 512; }

// Removed, with all in it, unless kept (the checkpoint taken).
struct IncomingCheckpoint {
  std::string path;
  bool keep = false;
  ~IncomingCheckpoint() {
    std::error_code ec;
    if (!keep) fs::remove_all(path, ec);
  }
};

}  // namespace

long long checkpoint_tar_bound(const std::string& folder) {
  std::error_code ec;
  if (folder.empty() || !fs::is_directory(folder, ec) || fs::is_empty(folder, ec)) return 10240;
  long long bytes = 512;  // "./"
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::directory_entry& e = *it;
    const std::string name = "./" + fs::relative(e.path(), folder, ec).string();
    bytes += 512;
    if (name.size() >= 99) bytes += 512 + blocks(static_cast<long long>(name.size()) + 1);
    if (e.is_symlink(ec)) {
      const std::string target = fs::read_symlink(e.path(), ec).string();
      if (target.size() >= 99) bytes += 512 + blocks(static_cast<long long>(target.size()) + 1);
      it.disable_recursion_pending();
    } else if (e.is_regular_file(ec)) {
      bytes += blocks(static_cast<long long>(e.file_size(ec)));
    }
  }
  return bytes + 1024 + 10240;  // the end, and the last record's padding
}

std::vector<std::string> checkpoint_send_argv(const std::string& folder) {
  std::error_code ec;
  if (folder.empty() || !fs::is_directory(folder, ec) || fs::is_empty(folder, ec))
    return {"tar", "-cf", "-", "-T", "/dev/null"};
  return {"tar", "-cf", "-", "-C", folder, "."};
}

void read_checkpoint_stream(std::istream& in, const std::string& tar) {
  std::string line;
  char c;
  while (line.size() < 256 && in.get(c) && c != '\n') line += c;
  if (line.empty() && in.eof())
    throw UserError(Location{"race-checkpoint"}, "",
                    "nothing came on stdin: --receive takes a checkpoint as the coordinator sends it (its size line, "
                    "then a tar), and nothing was replaced");
  std::optional<long long> declared = declared_size(line, kCheckpointSizeWord);
  if (!declared)
    throw UserError(Location{"race-checkpoint"}, "",
                    fmt::format("what came does not begin with its size (\"{} BYTES\") but with {}: nothing was "
                                "replaced",
                                kCheckpointSizeWord, printable(line, 60)));
  const std::string folder = fs::path(tar).parent_path().string();
  const long long free = free_bytes(folder);
  if (free >= 0 && *declared + (256LL << 20) > free)
    throw UserError(Location{folder}, "",
                    fmt::format("the checkpoint that comes declares {}, and this disk has {} free: nothing was "
                                "replaced",
                                format_bytes(*declared), format_bytes(free)));
  const long long most = with_growth(*declared);
  std::ofstream out(tar, std::ios::binary | std::ios::trunc);
  if (!out) throw UserError(Location{tar}, "", "cannot write the checkpoint that comes here");
  std::vector<char> buf(1 << 20);
  long long got = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const long long n = in.gcount();
    if (n <= 0) break;
    got += n;
    if (got > most)
      throw UserError(Location{"race-checkpoint"}, "",
                      fmt::format("the checkpoint that came is larger than the {} it declared (more than {}): "
                                  "nothing was replaced",
                                  format_bytes(*declared), format_bytes(most)));
    out.write(buf.data(), n);
    if (!out) throw UserError(Location{tar}, "", "cannot write the checkpoint that comes here (the disk is full?)");
  }
}

nlohmann::json receive_checkpoint(const Run& run, const std::string& tar) {
  const std::string folder = run_checkpoint_folder(run);
  if (folder.empty())
    throw UserError(Location{run.dir}, "", "the run's script names no checkpoint folder (DDPCTL_CHECKPOINT_DIR)");
  TarListing listing = read_tar_members(tar);
  if (!listing.problem.empty())
    throw UserError(Location{folder}, "", "the checkpoint that came is not a whole tar archive, nothing was "
                                          "replaced: " + listing.problem);
  std::vector<TarMember> members;
  std::vector<std::string> links;
  long long bytes = 0;
  int files = 0;
  for (auto m : listing.members) {
    if (m.name.rfind("./", 0) == 0) m.name = m.name.substr(2);
    if (m.name.empty() || m.name == ".") continue;
    auto refuse = [&](const std::string& why) {
      throw UserError(Location{folder}, "",
                      fmt::format("the checkpoint that came holds {} ({}): nothing was replaced",
                                  printable(m.name, 200), why));
    };
    if (auto why = tar_name_problem(m.name)) refuse(*why + ", not a name under its folder");
    if (m.type == TarMember::Type::SymbolicLink) {
      if (auto why = tar_link_problem(m)) refuse(*why);
      links.push_back(m.name);
    } else if (m.type != TarMember::Type::File && m.type != TarMember::Type::Folder) {
      refuse(describe_tar_type(m) + ", not a file, folder or link inside it");
    }
    // Nothing is written through a link the archive makes.
    for (const auto& l : links)
      if (m.name.size() > l.size() && m.name.compare(0, l.size() + 1, l + "/") == 0)
        refuse("a name under the link " + printable(l, 100));
    if (m.type == TarMember::Type::File) {
      ++files;
      bytes += m.size;
    }
    members.push_back(m);
  }
  IncomingCheckpoint incoming{fmt::format("{}.incoming-{}", folder, utc_now_iso())};
  std::error_code ec;
  fs::remove_all(incoming.path, ec);
  fs::create_directories(incoming.path, ec);
  if (ec) throw UserError(Location{incoming.path}, "", "cannot make the folder the checkpoint comes into: " + ec.message());
  unpack_tar_members(tar, members, incoming.path, "the checkpoint that came");
  nlohmann::json out = {{"folder", folder}, {"files", files}, {"bytes", bytes}};
  if (fs::is_directory(folder, ec) && !fs::is_empty(folder, ec)) {
    const std::string kept = fmt::format("{}.before-{}", folder, utc_now_iso());
    fs::rename(folder, kept);
    out["kept"] = kept;
  } else {
    fs::remove_all(folder, ec);
  }
  fs::rename(incoming.path, folder);
  incoming.keep = true;
  return out;
}

}  // namespace ddpctl
