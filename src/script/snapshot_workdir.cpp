#include "script/snapshot_workdir.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/token.hpp"

namespace fs = std::filesystem;

namespace ddpctl {

namespace {

[[noreturn]] void cannot_link(const fs::path& at, const std::error_code& ec) {
  throw UserError(fmt::format("snapshot: cannot make the job's working directory: {}: {}", at.string(), ec.message()));
}

// Links in `view` to every entry of `live` that `view` has not (what the
// snapshot left out: ignored data, outputs); a live folder that is gone or
// unreadable has nothing to link.
void link_live(const fs::path& live, const fs::path& view, bool top) {
  std::error_code live_ec;
  for (auto it = fs::directory_iterator(live, live_ec); !live_ec && it != fs::directory_iterator();
       it.increment(live_ec)) {
    fs::path name = it->path().filename();
    if (top && name == ".git") continue;
    fs::path to = view / name;
    std::error_code e;
    if (fs::exists(fs::symlink_status(to, e))) continue;  // the snapshot's
    fs::create_symlink(it->path(), to, e);
    if (e) cannot_link(to, e);
  }
}

// Makes `view` a folder of the snapshot folder `snap`: its folders made anew,
// its files hard links to the snapshot's (a directory entry each; a symbolic
// link where the file system refuses one), its symbolic links copied, and
// every entry of `live` the snapshot has not (ignored, left out) a symbolic
// link to the live one. `top`: the snapshot's root, where a repository's .git
// is no part of the job's files (git in the job would take the view for its
// work tree, every file changed).
void mirror(const fs::path& snap, const fs::path& live, const fs::path& view, bool top) {
  std::error_code ec;
  if (!fs::create_directory(view, ec) && ec) cannot_link(view, ec);
  for (auto it = fs::directory_iterator(snap, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& from = it->path();
    fs::path to = view / from.filename();
    std::error_code e;
    if (it->is_symlink(e)) {
      fs::copy_symlink(from, to, e);
    } else if (it->is_directory(e)) {
      mirror(from, live / from.filename(), to, false);
      continue;
    } else {
      fs::create_hard_link(from, to, e);
      if (e) {
        e.clear();
        fs::create_symlink(from, to, e);
      }
    }
    if (e) cannot_link(to, e);
  }
  if (ec) cannot_link(snap, ec);
  link_live(live, view, top);
}

// The folders from the view's top down to the submit folder (`prefix`) are
// folders of the view, also where the snapshot has none of their files (a
// submit folder .gitignore ignores, as the demo's demo/): a link to the live
// folder there would put the job in the live folder, not in its view.
void mirror_down_to(const fs::path& live_top, const fs::path& view_top, const std::string& prefix) {
  fs::path live = live_top, view = view_top;
  for (const auto& part : fs::path(prefix)) {
    live /= part;
    view /= part;
    std::error_code e;
    if (fs::is_directory(fs::symlink_status(view, e))) continue;
    if (fs::is_symlink(fs::symlink_status(view, e))) fs::remove(view, e);
    if (e) cannot_link(view, e);
    if (!fs::create_directory(view, e) && e) cannot_link(view, e);
    link_live(live, view, false);
  }
}

}  // namespace

std::string make_workdir(const std::string& run_dir, const Snapshot& snap) {
  std::string root = run_dir + "/workdir";
  std::string partial = fmt::format("{}/.workdir.{}.partial", run_dir, new_token());
  std::error_code ec;
  try {
    mirror(snap.dir, snap.live_dir, partial, true);
    mirror_down_to(snap.live_dir, partial, snap.prefix());
  } catch (...) {
    fs::remove_all(partial, ec);
    throw;
  }
  // A retried submission of the same run replaces its view (no job used it).
  fs::remove_all(root, ec);
  fs::rename(partial, root, ec);
  if (ec) {
    fs::remove_all(partial, ec);
    throw UserError(fmt::format("snapshot: cannot move the job's working directory into {}: {}", root, ec.message()));
  }
  return snap.prefix().empty() ? root : root + "/" + snap.prefix();
}

void record_snapshot(const std::string& run_dir, const SnapshotDecision& decision) {
  nlohmann::json j;
  if (!decision.snapshot) {
    j["off"] = decision.off_reason;
  } else {
    const Snapshot& s = *decision.snapshot;
    std::string workdir = make_workdir(run_dir, s);
    j = {{"mode", s.mode}, {"id", s.id}, {"dir", s.dir}, {"code_dir", s.code_dir}, {"files", s.files},
         {"bytes", s.bytes}, {"reused", s.reused}, {"live_dir", s.live_dir}, {"workdir", workdir}};
    if (!s.sent_from.empty()) j["sent_from"] = s.sent_from;
    if (s.mode == "git") {
      j["commit"] = s.commit.empty() ? nlohmann::json() : nlohmann::json(s.commit);
      j["branch"] = s.branch.empty() ? nlohmann::json() : nlohmann::json(s.branch);
      j["dirty"] = s.dirty;
      if (!s.diff.empty()) {
        write_file_atomic(run_dir + "/snapshot.diff", s.diff);
        j["diff"] = run_dir + "/snapshot.diff";
      }
    }
  }
  write_file_atomic(run_dir + "/snapshot.json", j.dump(2) + "\n");
}

}  // namespace ddpctl
