#include "script/snapshot.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/token.hpp"
#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "runs/ledger.hpp"
#include "base/text.hpp"

namespace fs = std::filesystem;

namespace ddpctl {

namespace {

constexpr std::chrono::seconds kGitTimeout{120};

struct Git {
  CommandRunner& runner;
  std::vector<std::string> prefix;  // git -C DIR [--git-dir=... --work-tree=...]
  std::string index;                // GIT_INDEX_FILE, empty for the repository's own

  CommandResult run(std::vector<std::string> args) const {
    std::vector<std::string> argv;
    if (!index.empty()) argv = {"env", "GIT_INDEX_FILE=" + index};
    argv.insert(argv.end(), prefix.begin(), prefix.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return runner.run(argv, kGitTimeout);
  }
  // Trimmed stdout, or a UserError saying what failed.
  std::string must(std::vector<std::string> args, const std::string& what) const {
    CommandResult r = run(std::move(args));
    if (!r.ok()) throw UserError(fmt::format("snapshot: {}: {}", what, r.describe_whole()));
    return trim(r.out);
  }
};

struct TreeEntry {
  std::string path;
  long long size = 0;
};

// `git ls-tree --full-tree -r -l -z TREE` (the whole tree, also from a
// subfolder, where ls-tree alone lists only that subfolder's files):
// "<mode> <type> <object> <size>\t<path>\0"; a
// submodule's entry (commit) has "-" as its size and is not copied.
std::vector<TreeEntry> tree_files(const Git& git, const std::string& tree) {
  CommandResult r = git.run({"ls-tree", "--full-tree", "-r", "-l", "-z", tree});
  if (!r.ok()) throw UserError("snapshot: listing the snapshot's files failed: " + r.describe());
  std::vector<TreeEntry> out;
  size_t start = 0;
  while (start < r.out.size()) {
    size_t end = r.out.find('\0', start);
    if (end == std::string::npos) end = r.out.size();
    std::string rec = r.out.substr(start, end - start);
    start = end + 1;
    size_t tab = rec.find('\t');
    if (tab == std::string::npos) continue;
    auto words = split_ws(rec.substr(0, tab));
    if (words.size() < 4 || words[1] != "blob") continue;
    out.push_back({rec.substr(tab + 1), std::atoll(words[3].c_str())});
  }
  return out;
}

// Refuses a snapshot over the limit, naming its largest files.
void check_size(const std::vector<TreeEntry>& files, const RunSpec& spec, long long total) {
  const auto& s = spec.snapshot;
  if (total <= s.max_bytes) return;
  std::vector<TreeEntry> largest = files;
  std::sort(largest.begin(), largest.end(), [](const TreeEntry& a, const TreeEntry& b) { return a.size > b.size; });
  if (largest.size() > 5) largest.resize(5);
  std::string names;
  for (const auto& f : largest) names += fmt::format("\n  {:>10}  {}", format_bytes(f.size), f.path);
  throw UserError(s.where, "snapshot",
                  fmt::format("the snapshot would be {} in {} files, over its limit of {}; the largest:{}\n"
                              "Leave data out of it (.gitignore, or snapshot.exclude), or raise snapshot.max_mb",
                              format_bytes(total), files.size(), format_bytes(s.max_bytes), names));
}

// Writes the tree's files into <store>/<tree> (once: a finished snapshot is
// a folder renamed into place, so a half-written one is never used).
bool materialize(const Git& git, const std::string& store, const std::string& tree, const std::string& dest) {
  if (fs::is_directory(dest)) return true;
  std::error_code ec;
  fs::create_directories(store, ec);
  std::string partial = fmt::format("{}/.{}.{}.partial", store, tree, new_token());
  fs::create_directories(partial, ec);
  if (ec) throw UserError(fmt::format("snapshot: cannot create {}: {}", partial, ec.message()));
  Git in_partial = git;
  in_partial.prefix.push_back("--work-tree=" + partial);
  CommandResult r = in_partial.run({"read-tree", tree});
  if (r.ok()) r = in_partial.run({"checkout-index", "--all", "--force"});
  if (!r.ok()) {
    fs::remove_all(partial, ec);
    throw UserError("snapshot: writing the snapshot's files failed: " + r.describe());
  }
  // Every run of this code shares these files (and the jobs' working
  // directories link them): a job writing one would change them all.
  for (auto it = fs::recursive_directory_iterator(partial, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec) && !it->is_symlink(ec))
      fs::permissions(it->path(), fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                      fs::perm_options::remove, ec);
  fs::rename(partial, dest, ec);
  if (ec) {
    fs::remove_all(partial, ec);
    if (fs::is_directory(dest)) return true;  // another ddpctl finished the same one first
    throw UserError(fmt::format("snapshot: cannot move the snapshot into {}", dest));
  }
  return false;
}

SnapshotDecision off(std::string why) { return {std::nullopt, std::move(why)}; }

// Whether the live folder `live` holds anything the snapshot's folder `in_snap`
// does not (ignored data beside code), at any depth; false for a file.
bool holds_left_out(const fs::path& in_snap, const fs::path& live) {
  std::error_code ec;
  if (!fs::is_directory(in_snap, ec)) return false;
  for (auto it = fs::recursive_directory_iterator(live, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (!fs::exists(fs::symlink_status(in_snap / it->path().lexically_relative(live), e2))) return true;
  }
  return false;
}

}  // namespace

std::string Snapshot::prefix() const {
  std::string p = fs::path(code_dir).lexically_relative(dir).lexically_normal().string();
  while (!p.empty() && p.back() == '/') p.pop_back();
  return p == "." ? "" : p;
}

std::string snapshot_transfer_record(const Snapshot& snap, const std::string& store, const std::string& sent_from) {
  nlohmann::json j = {{"id", snap.id},       {"mode", snap.mode},   {"prefix", snap.prefix()},
                      {"files", snap.files}, {"bytes", snap.bytes}, {"store", store},
                      {"commit", snap.commit}, {"branch", snap.branch}, {"dirty", snap.dirty},
                      {"diff", snap.diff},   {"sent_from", sent_from}};
  return j.dump(2) + "\n";
}

SnapshotDecision given_snapshot(const std::string& record_file, const std::string& cwd) {
  const Location where{"--snapshot-from"};
  std::error_code ec;
  if (!fs::is_regular_file(record_file, ec))
    throw UserError(where, "", fmt::format("{} is not a file (the record of a snapshot sent by a remote submit)", record_file));
  auto j = nlohmann::json::parse(read_file(record_file, 256u << 20), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("id") || !j["id"].is_string() || !j.contains("store") ||
      !j["store"].is_string())
    throw UserError(where, "", fmt::format("{} is not a snapshot record (no id or store)", record_file));
  Snapshot snap;
  snap.id = j["id"].get<std::string>();
  snap.mode = j.value("mode", std::string("git"));
  snap.files = j.value("files", 0LL);
  snap.bytes = j.value("bytes", 0LL);
  snap.commit = j.value("commit", std::string());
  snap.branch = j.value("branch", std::string());
  snap.dirty = j.value("dirty", false);
  snap.diff = j.value("diff", std::string());
  snap.sent_from = j.value("sent_from", std::string());
  snap.reused = true;
  fs::path store(j["store"].get<std::string>());
  snap.dir = (store.is_absolute() ? store : fs::path(cwd) / store).lexically_normal().string();
  while (snap.dir.size() > 1 && snap.dir.back() == '/') snap.dir.pop_back();
  if (snap.id.empty() || snap.id.find('/') != std::string::npos || fs::path(snap.dir).filename() != snap.id ||
      !fs::is_directory(snap.dir, ec))
    throw UserError(where, "",
                    fmt::format("the snapshot {} is not in {}: it is sent before the submit runs (`ddpctl submit "
                                "--on HOST` from the machine it was taken on sends it again)",
                                snap.id, snap.dir));
  std::string prefix = j.value("prefix", std::string());
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  snap.code_dir = prefix.empty() ? snap.dir : snap.dir + "/" + prefix;
  // The live folder is the work tree's top: this folder, less the submit
  // folder's place in the tree when this folder ends with it.
  fs::path live = fs::path(cwd).lexically_normal();
  std::string live_s = live.string();
  while (live_s.size() > 1 && live_s.back() == '/') live_s.pop_back();
  if (!prefix.empty() && live_s.size() > prefix.size() + 1 &&
      live_s.compare(live_s.size() - prefix.size() - 1, std::string::npos, "/" + prefix) == 0)
    live_s = live_s.substr(0, live_s.size() - prefix.size() - 1);
  snap.live_dir = live_s;
  return {snap, ""};
}

namespace {

// snapshot.paths: a store repository of our own, whose work tree is the
// submit folder: git add -f takes exactly the listed paths, ignored or not.
void add_listed_paths(const RunSpec& spec, const std::string& cwd, const std::string& store, const std::string& index,
                      Git& git, Snapshot& snap) {
  const auto& s = spec.snapshot;
  std::error_code ec;
  fs::create_directories(store, ec);
  std::string repo = store + "/objects.git";
  if (!fs::exists(repo + "/HEAD")) {
    CommandResult r = git.runner.run({"git", "init", "--quiet", "--bare", repo}, kGitTimeout);
    if (!r.ok() && !fs::exists(repo + "/HEAD"))
      throw UserError(s.where, "snapshot", "cannot create the snapshot store (git init): " + r.describe());
  }
  git.prefix = {"git", "--git-dir=" + repo, "--work-tree=" + cwd, "-C", cwd};
  git.index = index;
  std::vector<std::string> add = {"add", "--force", "--"};
  for (const auto& p : s.paths) {
    if (!fs::exists(fs::path(cwd) / p))
      throw UserError(s.where, "snapshot.paths", fmt::format("{} does not exist in {}", p, cwd));
    add.push_back(p);
  }
  for (const auto& e : s.exclude) add.push_back(":(exclude)" + e);
  CommandResult r = git.run(add);
  if (!r.ok()) throw UserError(s.where, "snapshot.paths", "git add of the listed paths failed: " + r.describe_whole());
  snap.mode = "paths";
  snap.id = git.must({"write-tree"}, "git write-tree");
  snap.dir = store + "/" + snap.id;
  snap.code_dir = snap.dir;
  snap.live_dir = fs::absolute(cwd).lexically_normal().string();
}

// The `git add` that takes the work tree as it is: new files too, less what
// .gitignore names, snapshot.exclude and ddpctl's own outputs.
std::vector<std::string> work_tree_add(const RunSpec& spec, const std::string& cwd, const std::string& runs_root,
                                       const Git& git) {
  const auto& s = spec.snapshot;
  std::vector<std::string> add = {"add", "--all", "--", ":/"};
  // Each exclusion as a pathspec's magic and path: snapshot.exclude is
  // relative to the top of the tree, ddpctl's outputs to the submit folder.
  std::vector<std::pair<std::string, std::string>> excludes;
  for (const auto& e : s.exclude) excludes.emplace_back("top,", e);
  // ddpctl's own outputs are never code: the logs folder and the runs
  // folder (with the snapshots), where they are inside the tree.
  for (const auto& out : {spec.output_dir, runs_root}) {
    fs::path rel = fs::absolute(out).lexically_normal().lexically_relative(fs::path(cwd).lexically_normal());
    if (!rel.empty() && *rel.begin() != "..") excludes.emplace_back("", rel.string());
  }
  // git add refuses (exit 1) a pathspec naming an ignored path, an
  // exclusion too, so a submit from an ignored folder (demo/, runs/,
  // outputs/) failed. What .gitignore leaves out, add --all leaves out
  // anyway: only the paths git does not ignore are excluded.
  // git judges a pattern (logs/*.out) by the folders before its first
  // wildcard: excluded as long as those are not ignored.
  for (const auto& [magic, path] : excludes) {
    size_t wild = path.find_first_of("*?[");
    std::string literal = wild == std::string::npos ? path : path.substr(0, path.rfind('/', wild) + 1);
    if (literal.empty() || !git.run({"check-ignore", "--quiet", "--", ":(" + magic + ")" + literal}).ok())
      add.push_back(":(" + magic + "exclude)" + path);
  }
  return add;
}

// Where the snapshot's files come from: HEAD's commit and branch, and how
// they differ from it.
void read_git_head(const Git& git, Snapshot& snap) {
  CommandResult head = git.run({"rev-parse", "--verify", "--quiet", "HEAD"});
  if (head.ok()) {
    snap.commit = trim(head.out);
    CommandResult branch = git.run({"symbolic-ref", "--short", "--quiet", "HEAD"});
    if (branch.ok()) snap.branch = trim(branch.out);
    std::string head_tree = git.must({"rev-parse", "HEAD^{tree}"}, "git rev-parse HEAD^{tree}");
    snap.dirty = head_tree != snap.id;
    if (snap.dirty) snap.diff = git.must({"diff", "--binary", "HEAD", snap.id}, "git diff");
    // The trailing newline was trimmed; a patch needs it.
    if (!snap.diff.empty()) snap.diff += "\n";
  } else {
    snap.dirty = true;  // no commit yet: nothing says what these files are
  }
}

// The submit folder's git work tree, through a scratch index (`index`):
// nullopt when `snap` holds it, else why there is none (snapshot: auto),
// or a UserError naming the spec's field (an explicit snapshot: git).
std::optional<SnapshotDecision> add_work_tree(const RunSpec& spec, const std::string& cwd,
                                              const std::string& runs_root, const std::string& store,
                                              const std::string& index, Git& git, Snapshot& snap) {
  const auto& s = spec.snapshot;
  bool explicit_mode = s.mode != SnapshotSettings::Mode::Auto;
  CommandResult top = git.run({"rev-parse", "--show-toplevel"});
  if (top.not_found) {
    if (explicit_mode) throw UserError(s.where, "snapshot", "git is not installed here; snapshot: git needs it");
    return off("git is not installed here");
  }
  if (!top.ok()) {
    if (explicit_mode)
      throw UserError(s.where, "snapshot",
                      fmt::format("{} is not in a git work tree; use snapshot: {{paths: [...]}} there", cwd));
    return off("not a git work tree (snapshot: {paths: [...]} snapshots one)");
  }
  std::string prefix = git.must({"rev-parse", "--show-prefix"}, "git rev-parse --show-prefix");
  // A scratch index starting from the repository's own (its stat cache
  // spares hashing unchanged files): add -A takes the work tree as it is,
  // new files too, and leaves out what .gitignore names.
  std::string own_index = git.must({"rev-parse", "--git-path", "index"}, "git rev-parse --git-path");
  if (!own_index.empty() && own_index[0] != '/') own_index = cwd + "/" + own_index;
  git.index = index;
  std::error_code ec;
  if (fs::exists(own_index)) {
    fs::copy_file(own_index, git.index, ec);
    // With the index's own time: git re-reads a file changed in the same
    // second as the index was written ("racily clean"), judged by the
    // index file's mtime. A copy made now would make such a file look
    // unchanged (same size, same second), and the snapshot would hold
    // the committed text instead of the file on disk.
    if (!ec) fs::last_write_time(git.index, fs::last_write_time(own_index, ec), ec);
  }
  CommandResult r = git.run(work_tree_add(spec, cwd, runs_root, git));
  if (!r.ok()) throw UserError(s.where, "snapshot", "git add of the work tree failed: " + r.describe_whole());
  snap.mode = "git";
  snap.live_dir = trim(top.out);
  snap.id = git.must({"write-tree"}, "git write-tree");
  snap.dir = store + "/" + snap.id;
  snap.code_dir = prefix.empty() ? snap.dir : snap.dir + "/" + prefix;
  while (snap.code_dir.size() > 1 && snap.code_dir.back() == '/') snap.code_dir.pop_back();
  read_git_head(git, snap);
  return std::nullopt;
}

}  // namespace

SnapshotDecision take_snapshot(const RunSpec& spec, const std::string& cwd, const std::string& runs_root,
                               bool no_snapshot, CommandRunner& runner, const std::string& given) {
  using Mode = SnapshotSettings::Mode;
  const auto& s = spec.snapshot;
  if (!given.empty()) return given_snapshot(given, cwd);
  if (no_snapshot) return off("--no-snapshot");
  if (s.mode == Mode::Off) return off("snapshot: false");
  bool explicit_mode = s.mode != Mode::Auto;
  if (spec.command_shell) {
    // Its words cannot be told apart reliably: which name code and which data.
    if (explicit_mode)
      throw UserError(s.where, "snapshot",
                      "a snapshot needs command: as a list ([program, arg, ...]) so that ddpctl can tell which "
                      "words name code; `command:` is a shell line. Write it as a list, or set snapshot: false");
    return off("command: is a shell line (write it as a list to snapshot the code)");
  }
  std::string store = fs::absolute(runs_root).lexically_normal().string() + "/.snapshots";
  ScratchDir scratch("ddpctl-snapshot");
  Snapshot snap;
  Git git{runner, {"git", "-C", cwd}, ""};
  if (s.mode == Mode::Paths) {
    add_listed_paths(spec, cwd, store, scratch.path() + "/index", git, snap);
  } else if (auto none = add_work_tree(spec, cwd, runs_root, store, scratch.path() + "/index", git, snap)) {
    return *none;
  }
  auto files = tree_files(git, snap.id);
  for (const auto& f : files) snap.bytes += f.size;
  snap.files = static_cast<long long>(files.size());
  if (files.empty()) {
    if (explicit_mode) throw UserError(s.where, "snapshot", "the snapshot would hold no files");
    return off("the git work tree has no files to snapshot");
  }
  check_size(files, spec, snap.bytes);
  snap.reused = materialize(git, store, snap.id, snap.dir);
  return {snap, ""};
}

std::vector<std::string> snapshot_argv(const std::vector<std::string>& argv, const Snapshot& snap,
                                       const std::string& cwd) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (const auto& word : argv) {
    fs::path rel(word);
    if (word.empty() || word[0] == '-' || rel.is_absolute() || word == "." || word == ".." ||
        word.find("..") != std::string::npos) {
      out.push_back(word);
      continue;
    }
    fs::path in_snap = fs::path(snap.code_dir) / rel;
    std::error_code ec;
    if (!fs::exists(in_snap, ec) || holds_left_out(in_snap, fs::path(cwd) / rel)) {
      out.push_back(word);  // not code (data, outputs, a program on PATH), or code beside data: the working directory has both
      continue;
    }
    out.push_back(in_snap.lexically_normal().string());
  }
  return out;
}

}  // namespace ddpctl
