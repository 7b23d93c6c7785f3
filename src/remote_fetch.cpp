#include "remote_fetch.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

#include "diagnostics.hpp"
#include "files.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace ddpctl {

std::vector<std::string> remote_fetch_argv(const std::string& dir_word, const std::string& runs,
                                           const std::vector<std::string>& targets) {
  std::string line =
      std::string(kRemoteDirSh) + "r=$2; shift 2; " +
      "cd -- \"$d\" 2>/dev/null || { echo \"ddpctl: error: --on: there is no folder $d there; --remote-dir names "
      "the folder whose runs/ holds the runs\" >&2; exit 1; }; "
      "cd -- \"$r\" 2>/dev/null || { echo \"ddpctl: error: --on: there is no runs folder $d/$r there\" >&2; exit 1; }; "
      "ids=; for a in \"$@\"; do id=; "
      "if [ -f \"$a/run.json\" ]; then id=$a; else for c in \"$a\"-*; do if [ -f \"$c/run.json\" ]; then id=$c; fi; "
      "done; fi; "
      "if [ -z \"$id\" ]; then echo \"ddpctl: error: '$a': no run with this name or id under $d/$r\" >&2; exit 1; "
      "fi; ids=\"$ids $id\"; done; "
      "exec tar -cf - --exclude=workdir --exclude='.workdir.*' $ids";
  std::vector<std::string> argv = {"sh", "-c", line, "sh", dir_word, runs};
  argv.insert(argv.end(), targets.begin(), targets.end());
  return argv;
}

std::vector<std::string> fetch_runs(const FetchRequest& f, CommandRunner& local, std::ostream& out) {
  const RemoteCommand& c = f.command;
  for (const auto& t : f.targets)
    if (t.empty() || t[0] == '-' || t[0] == '.' || t.find('/') != std::string::npos)
      throw UserError(Location{t}, "", "is not a run's id, name or prefix");
  const std::string cwd = fs::current_path().string();
  const std::string dir_word = remote_dir_word(cwd, c.home, c.dir_option);
  const std::string runs = f.runs_option.empty() ? "runs" : f.runs_option;
  SshConnection conn = ssh_connect(local, c.host, c.home, ssh_program(c.ssh_command));
  SshRunner ssh(local, conn);
  CommandResult r = ssh.run(remote_fetch_argv(dir_word, runs, f.targets), std::chrono::minutes(10));
  if (!r.ok()) {
    std::string said = trim(r.err);
    if (said.rfind("ddpctl: error: ", 0) == 0) throw UserError(said.substr(15));
    throw UserError(Location{"--on"}, "", fmt::format("cannot fetch from {}: {}", c.host, r.describe()));
  }
  fs::create_directories(f.local_runs_root);
  ScratchDir scratch("ddpctl-fetch");
  write_file_atomic(scratch.path() + "/runs.tar", r.out);
  // Unpacked beside the runs (one file system), then each renamed into place.
  std::string incoming = fmt::format("{}/.incoming.fetch.{}", f.local_runs_root, ::getpid());
  std::error_code ec;
  fs::remove_all(incoming, ec);
  fs::create_directories(incoming);
  CommandResult x = local.run({"tar", "-xf", scratch.path() + "/runs.tar", "-C", incoming}, std::chrono::minutes(10));
  if (!x.ok()) {
    fs::remove_all(incoming, ec);
    throw UserError(fmt::format("cannot unpack the runs fetched from {}: {}", c.host, x.describe()));
  }
  std::vector<std::string> ids;
  for (const auto& e : fs::directory_iterator(incoming)) {
    std::string id = e.path().filename().string();
    long long files = 0, bytes = 0;
    for (const auto& g : fs::recursive_directory_iterator(e.path()))
      if (g.is_regular_file(ec)) files++, bytes += static_cast<long long>(g.file_size(ec));
    std::string dest = f.local_runs_root + "/" + id;
    fs::remove_all(dest, ec);
    fs::rename(e.path(), dest, ec);
    if (ec) {
      fs::remove_all(incoming, ec);
      throw UserError(fmt::format("cannot move the fetched run into {}: {}", dest, ec.message()));
    }
    out << fmt::format("fetched {} from {}: {} files, {}, into {}\n", id, c.host, files, format_bytes(bytes), dest);
    ids.push_back(id);
  }
  fs::remove_all(incoming, ec);
  out << fmt::format("ddpctl: through {}: {} ssh call(s)\n", conn.describe(), ssh.calls());
  return ids;
}

std::string remote_output_file(const std::vector<std::string>& words) {
  if (words.empty() || words[0] != "report") return "";
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i] == "--") break;
    if (words[i] == "--plot" && i + 1 < words.size()) return words[i + 1];
    if (words[i].rfind("--plot=", 0) == 0) return words[i].substr(7);
  }
  return "";
}

void bring_back_file(SshRunner& ssh, const std::string& dir, const std::string& file) {
  CommandResult r = ssh.run({"sh", "-c", "cd -- \"$1\" && exec cat -- \"$2\"", "sh", dir, file}, std::chrono::minutes(5));
  if (!r.ok())
    throw UserError(Location{"--on"}, "",
                    fmt::format("the command ran, but {} could not be brought back from {}: {}", file,
                                ssh.connection().host, r.describe()));
  fs::path here(file);
  if (here.has_parent_path()) fs::create_directories(here.parent_path());
  write_file_atomic(file, r.out);
}

}  // namespace ddpctl
