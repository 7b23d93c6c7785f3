#include "remote_fetch.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "diagnostics.hpp"
#include "files.hpp"
#include "runs.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace ddpctl {

std::vector<std::string> remote_fetch_argv(const std::string& dir_word, const std::string& runs,
                                           const std::vector<std::string>& targets, bool skip_missing) {
  std::string line =
      std::string(kRemoteDirSh) + "r=$2; shift 2; " +
      "cd -- \"$d\" 2>/dev/null || { echo \"ddpctl: error: --on: there is no folder $d there; --remote-dir names "
      "the folder whose runs/ holds the runs\" >&2; exit 1; }; "
      "cd -- \"$r\" 2>/dev/null || { echo \"ddpctl: error: --on: there is no runs folder $d/$r there\" >&2; exit 1; }; "
      "ids=; for a in \"$@\"; do id=; "
      "if [ -f \"$a/run.json\" ]; then id=$a; else for c in \"$a\"-*; do if [ -f \"$c/run.json\" ]; then id=$c; fi; "
      "done; fi; "
      "if [ -z \"$id\" ]; then " +
      std::string(skip_missing ? "continue; "
                               : "echo \"ddpctl: error: '$a': no run with this name or id under $d/$r\" >&2; exit 1; ") +
      "fi; ids=\"$ids $id\"; done; if [ -z \"$ids\" ]; then exit 0; fi; "
      // Runs that jobs are writing: a file that changed or went while tar
      // read it is GNU tar's exit 1, and the copy is as of then.
      "tar -cf - --ignore-failed-read --exclude=workdir --exclude='.workdir.*' --exclude=.fetched $ids; rc=$?; "
      "if [ \"$rc\" = 1 ]; then rc=0; fi; exit $rc";
  std::vector<std::string> argv = {"sh", "-c", line, "sh", dir_word, runs};
  argv.insert(argv.end(), targets.begin(), targets.end());
  return argv;
}

namespace {

// Fetches `targets` from <dir_word>/<runs> there into `local_runs_root`,
// each replacing its copy whole, marked with where it came from.
std::vector<std::string> fetch_into(SshRunner& ssh, CommandRunner& local, const std::string& dir_word,
                                    const std::string& runs, const std::vector<std::string>& targets,
                                    bool skip_missing, const std::string& local_runs_root, std::ostream* out) {
  const std::string& host = ssh.connection().host;
  CommandResult r = ssh.run(remote_fetch_argv(dir_word, runs, targets, skip_missing), std::chrono::minutes(10));
  if (!r.ok()) {
    std::string said = trim(r.err);
    if (said.rfind("ddpctl: error: ", 0) == 0) throw UserError(said.substr(15));
    throw UserError(Location{"--on"}, "", fmt::format("cannot fetch from {}: {}", host, r.describe()));
  }
  std::vector<std::string> ids;
  if (r.out.empty()) return ids;  // nothing there (skip_missing)
  fs::create_directories(local_runs_root);
  ScratchDir scratch("ddpctl-fetch");
  write_file_atomic(scratch.path() + "/runs.tar", r.out);
  // Unpacked beside the runs (one file system), then each renamed into place.
  std::string incoming = fmt::format("{}/.incoming.fetch.{}", local_runs_root, ::getpid());
  std::error_code ec;
  fs::remove_all(incoming, ec);
  fs::create_directories(incoming);
  CommandResult x = local.run({"tar", "-xf", scratch.path() + "/runs.tar", "-C", incoming}, std::chrono::minutes(10));
  if (!x.ok()) {
    fs::remove_all(incoming, ec);
    throw UserError(fmt::format("cannot unpack the runs fetched from {}: {}", host, x.describe()));
  }
  for (const auto& e : fs::directory_iterator(incoming)) {
    std::string id = e.path().filename().string();
    long long files = 0, bytes = 0;
    for (const auto& g : fs::recursive_directory_iterator(e.path()))
      if (g.is_regular_file(ec)) files++, bytes += static_cast<long long>(g.file_size(ec));
    std::string dest = local_runs_root + "/" + id;
    nlohmann::json mark = {{"host", host}, {"dir", dir_word}, {"runs", runs}, {"at", utc_now_iso()}};
    write_file_atomic(e.path().string() + "/.fetched", mark.dump(2) + "\n");
    fs::remove_all(dest, ec);
    fs::rename(e.path(), dest, ec);
    if (ec) {
      fs::remove_all(incoming, ec);
      throw UserError(fmt::format("cannot move the fetched run into {}: {}", dest, ec.message()));
    }
    if (out) *out << fmt::format("fetched {} from {}: {} files, {}, into {}\n", id, host, files, format_bytes(bytes), dest);
    ids.push_back(id);
  }
  fs::remove_all(incoming, ec);
  return ids;
}

}  // namespace

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
  auto ids = fetch_into(ssh, local, dir_word, runs, f.targets, false, f.local_runs_root, &out);
  out << fmt::format("ddpctl: through {}: {} ssh call(s)\n", conn.describe(), ssh.calls());
  return ids;
}

std::vector<std::string> fetched_copies(const std::string& local_runs_root, const std::string& host,
                                        const std::string& dir) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(local_runs_root, ec)) {
    std::string mark = e.path().string() + "/.fetched";
    if (!fs::is_regular_file(mark, ec)) continue;
    auto j = nlohmann::json::parse(read_file(mark), nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    if (j.value("host", std::string()) == host && j.value("dir", std::string()) == dir &&
        j.value("runs", std::string()) == "runs")
      ids.push_back(e.path().filename().string());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

int refresh_fetched_copies(SshRunner& ssh, CommandRunner& local, const std::string& dir_word,
                           const std::string& local_runs_root) {
  std::vector<std::string> ids = fetched_copies(local_runs_root, ssh.connection().host, dir_word);
  if (ids.empty()) return 0;
  return static_cast<int>(fetch_into(ssh, local, dir_word, "runs", ids, true, local_runs_root, nullptr).size());
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
