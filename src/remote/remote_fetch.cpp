#include "remote/remote_fetch.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/sized_stream.hpp"
#include "runs/run_store.hpp"
#include "base/text.hpp"
#include "remote/remote.hpp"

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
      "fi; case \" $ids \" in *\" $id \"*) ;; *) ids=\"$ids $id\" ;; esac; done; "
      "if [ -z \"$ids\" ]; then exit 0; fi; "
      // First its size, as tar will write it at most (a header and the
      // data in 512-byte blocks each, a long name's own header, the end and
      // tar's blocking): fetch here takes no more than that (and room for
      // files that grow as tar reads them), and no more than its disk has.
      "n=$(find $ids \\( -name workdir -o -name '.workdir.*' -o -name .fetched \\) -prune -o -printf '%s %p\\n' "
      "2>/dev/null | awk '{ s = $1; sub(/^[^ ]* /, \"\"); b += 512 + int((s + 511) / 512) * 512; "
      "if (length($0) >= 99) b += 1024 + int((length($0) + 512) / 512) * 512 } END { printf \"%d\", b + 20480 }'); "
      "echo \"" + std::string(kFetchSizeWord) + " $n\"; "
      // Runs that jobs are writing: a file that changed or went while tar
      // read it is GNU tar's exit 1, and the copy is as of then. A hard link
      // goes as the file it is (fetch here takes files and folders only).
      "tar -cf - --ignore-failed-read --hard-dereference --exclude=workdir --exclude='.workdir.*' --exclude=.fetched "
      "$ids; rc=$?; "
      "if [ \"$rc\" = 1 ]; then rc=0; fi; exit $rc";
  std::vector<std::string> argv = {"sh", "-c", line, "sh", dir_word, runs};
  argv.insert(argv.end(), targets.begin(), targets.end());
  return argv;
}

namespace {

bool asked_for(const std::string& id, const std::vector<std::string>& targets, bool prefixes) {
  for (const auto& t : targets)
    if (id == t || (prefixes && id.size() > t.size() + 1 && id.compare(0, t.size() + 1, t + "-") == 0)) return true;
  return false;
}

// Why `m` (a file or folder with a safe name) cannot be written beside the
// members before it, recorded in `kinds`: a path both a file and a folder.
bool file_and_folder(const TarMember& m, std::map<std::string, TarMember::Type>& kinds) {
  std::vector<std::string> parts = split(m.name, '/');
  std::string path;
  for (size_t i = 0; i < parts.size(); ++i) {
    path += (i ? "/" : "") + parts[i];
    TarMember::Type want = i + 1 < parts.size() ? TarMember::Type::Folder : m.type;
    auto [it, fresh] = kinds.emplace(path, want);
    if (!fresh && it->second != want) return true;
  }
  return false;
}

}  // namespace

FetchAnswer check_fetch_answer(const std::vector<TarMember>& members, const std::vector<std::string>& targets,
                               bool prefixes) {
  FetchAnswer a;
  std::map<std::string, TarMember::Type> kinds;
  for (const auto& m : members) {
    auto refuse = [&](const std::string& why) { a.refused.push_back(printable(m.name, 120) + ": " + why); };
    if (auto why = tar_name_problem(m.name)) {
      refuse(*why);
      continue;
    }
    if (m.type != TarMember::Type::File && m.type != TarMember::Type::Folder) {
      refuse(describe_tar_type(m));
      continue;
    }
    const std::string id = m.name.substr(0, m.name.find('/'));
    const bool is_run = id.size() == m.name.size();
    if (!asked_for(id, targets, prefixes)) {
      refuse(fmt::format("not in a run asked for ({})", quoted_list(targets)));
    } else if (is_run && m.type != TarMember::Type::Folder) {
      refuse(describe_tar_type(m) + ", not a run's folder");
    } else if (m.name == id + "/.fetched") {
      refuse("ddpctl's own mark, which a login host does not send");
    } else if (std::find(a.runs.begin(), a.runs.end(), id) == a.runs.end() && a.runs.size() >= targets.size()) {
      refuse(fmt::format("one run more than the {} asked for", targets.size()));
    } else if (file_and_folder(m, kinds)) {
      refuse("both a file and a folder");
    } else if (std::find(a.runs.begin(), a.runs.end(), id) == a.runs.end()) {
      a.runs.push_back(id);
    }
  }
  return a;
}

namespace {

// The line a file begins with (at most 256 bytes).
std::string read_first_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  char c;
  while (line.size() < 256 && in.get(c) && c != '\n') line += c;
  return line;
}

// Removed, with all in it, however fetch ends.
struct IncomingFolder {
  std::string path;
  ~IncomingFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// What the login host said of a failure, as plain text.
[[noreturn]] void fetch_failed(const CommandResult& r, const std::string& host) {
  std::string said = trim(r.err);
  if (said.rfind("ddpctl: error: ", 0) == 0) throw UserError(plain_line(said.substr(15, said.find('\n') - 15)));
  throw UserError(Location{"--on"}, "", fmt::format("cannot fetch from {}: {}", host, r.describe()));
}

[[noreturn]] void refuse_answer(const FetchAnswer& a, const std::string& host) {
  constexpr size_t kShown = 20;
  std::vector<std::string> shown(a.refused.begin(), a.refused.begin() + std::min(kShown, a.refused.size()));
  if (a.refused.size() > kShown) shown.push_back(fmt::format("and {} more", a.refused.size() - kShown));
  throw UserError(Location{"--on"}, "",
                  fmt::format("{} sent what fetch does not take (it takes the asked runs' files and folders, nothing "
                              "else), so nothing was replaced here:\n  {}",
                              host, join(shown, "\n  ")));
}

// Fetches `targets` from <dir_word>/<runs> there into `local_runs_root`,
// each replacing its copy whole, marked with where it came from.
// `skip_missing`: a refresh of the copies here, whose targets are run ids.
std::vector<std::string> fetch_into(SshRunner& ssh, const std::string& dir_word, const std::string& runs,
                                    const std::vector<std::string>& targets, bool skip_missing,
                                    const std::string& local_runs_root, std::ostream* out) {
  const std::string& host = ssh.connection().host;
  // The answer and the runs from it, beside the runs (one file system: each
  // renamed into place).
  IncomingFolder incoming{fmt::format("{}/.incoming.fetch.{}", local_runs_root, ::getpid())};
  std::error_code ec;
  fs::remove_all(incoming.path, ec);
  if (fs::create_directories(incoming.path + "/runs", ec); ec)
    throw UserError(Location{incoming.path}, "", "cannot make the folder fetch unpacks into: " + ec.message());
  const std::string tar = incoming.path + "/answer.tar";
  std::string why;
  StdoutBound bound = sized_stream_bound(kFetchSizeWord, incoming.path, why);
  CommandResult r =
      ssh.run_to_file(remote_fetch_argv(dir_word, runs, targets, skip_missing), tar, std::chrono::minutes(10), bound);
  if (r.output_cut)
    throw UserError(Location{"--on"}, "", fmt::format("what {} sent was refused, so nothing was replaced here: {}", host,
                                                      why.empty() ? "it sent more than was asked for" : why));
  if (!r.ok()) fetch_failed(r, host);
  if (fs::file_size(tar, ec) == 0 && !ec) return {};  // nothing there (skip_missing)
  // The archive follows its size line.
  const long long start = static_cast<long long>(read_first_line(tar).size()) + 1;
  TarListing listing = read_tar_members(tar, start);
  if (!listing.problem.empty())
    throw UserError(Location{"--on"}, "",
                    fmt::format("what {} sent is not a whole tar archive, so nothing was replaced here: {}", host,
                                listing.problem));
  FetchAnswer answer = check_fetch_answer(listing.members, targets, !skip_missing);
  if (!answer.refused.empty()) refuse_answer(answer, host);
  unpack_tar_members(tar, listing.members, incoming.path + "/runs");
  for (const auto& id : answer.runs) {
    long long files = 0, bytes = 0;
    for (const auto& m : listing.members)
      if (m.type == TarMember::Type::File && m.name.compare(0, id.size() + 1, id + "/") == 0) files++, bytes += m.size;
    std::string from = incoming.path + "/runs/" + id, dest = local_runs_root + "/" + id;
    nlohmann::json mark = {{"host", host}, {"dir", dir_word}, {"runs", runs}, {"at", utc_now_iso()}};
    write_file_atomic(from + "/.fetched", mark.dump(2) + "\n");
    fs::remove_all(dest, ec);
    fs::rename(from, dest, ec);
    if (ec) throw UserError(fmt::format("cannot move the fetched run into {}: {}", dest, ec.message()));
    if (out) *out << fmt::format("fetched {} from {}: {} files, {}, into {}\n", id, host, files, format_bytes(bytes), dest);
  }
  return answer.runs;
}

}  // namespace

std::vector<std::string> fetch_runs(const FetchRequest& f, CommandRunner& local, std::ostream& out) {
  const RemoteTarget& t = f.target;
  for (const auto& target : f.targets)
    if (target.empty() || target[0] == '-' || target[0] == '.' || target.find('/') != std::string::npos ||
        script_value_problem(target))
      throw UserError(Location{printable(target)}, "", "is not a run's id, name or prefix");
  const std::string dir_word = remote_dir_word(t.cwd, t.home, t.dir_option);
  const std::string runs = f.runs_option.empty() ? "runs" : f.runs_option;
  RemoteSession session(t, local);
  auto ids = fetch_into(session.ssh(), dir_word, runs, f.targets, false, f.local_runs_root, &out);
  out << fmt::format("ddpctl: through {}: {} ssh call(s)\n", session.connection().describe(), session.ssh().calls());
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

int refresh_fetched_copies(SshRunner& ssh, const std::string& dir_word,
                           const std::string& local_runs_root) {
  std::vector<std::string> ids = fetched_copies(local_runs_root, ssh.connection().host, dir_word);
  if (ids.empty()) return 0;
  return static_cast<int>(fetch_into(ssh, dir_word, "runs", ids, true, local_runs_root, nullptr).size());
}

AfterRemote refresh_copies_after(const std::string& local_runs_root) {
  return [local_runs_root](RemoteSession& session, const std::string&) -> std::string {
    const RemoteTarget& t = session.target();
    int n = refresh_fetched_copies(session.ssh(), remote_dir_word(t.cwd, t.home, t.dir_option), local_runs_root);
    return n > 0 ? fmt::format("; refreshed the copies here of {} run(s) in {}", n, local_runs_root) : "";
  };
}

void bring_back_file(SshRunner& ssh, const std::string& dir, const std::string& file, const std::string& here) {
  CommandResult r = ssh.run({"sh", "-c", "cd -- \"$1\" && exec cat -- \"$2\"", "sh", dir, file}, std::chrono::minutes(5));
  if (!r.ok())
    throw UserError(Location{"--on"}, "",
                    fmt::format("the command ran, but {} could not be brought back from {}: {}", file,
                                ssh.connection().host, r.describe()));
  if (fs::path(here).has_parent_path()) fs::create_directories(fs::path(here).parent_path());
  write_file_atomic(here, r.out);
}

AfterRemote bring_back_after(const std::string& file) {
  if (file.empty()) return nullptr;
  return [file](RemoteSession& session, const std::string& dir) {
    const std::string& cwd = session.target().cwd;
    bool relative = !fs::path(file).is_absolute() && !cwd.empty();
    bring_back_file(session.ssh(), dir, file, relative ? (fs::path(cwd) / file).string() : file);
    return fmt::format("; brought {} back", file);
  };
}

}  // namespace ddpctl
