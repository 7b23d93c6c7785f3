#include "remote/remote_submit.hpp"

#include <filesystem>
#include <fmt/format.h>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/paths.hpp"
#include "remote/remote.hpp"
#include "remote/remote_install.hpp"
#include "script/snapshot.hpp"
#include "spec/spec.hpp"
#include "base/ssh.hpp"
#include "base/text.hpp"
#include "base/token.hpp"

namespace fs = std::filesystem;

namespace ddpctl {

RemoteSubmit remote_submit_for(RemoteTarget target, std::vector<std::string> words, std::vector<std::string> specs,
                               std::vector<std::string> sets, const std::string& runs_option,
                               const std::string& local_runs_root, bool snapshot, bool dry_run, const Environment& env) {
  RemoteSubmit r;
  r.target = std::move(target);
  r.words = std::move(words);
  r.specs = std::move(specs);
  r.sets = std::move(sets);
  r.runs_option = runs_option;
  r.local_runs_root = local_runs_root;
  r.snapshot = snapshot;
  r.dry_run = dry_run;
  r.portable = env.value("DDPCTL_PORTABLE");
  r.sent_from = env.hostname() + ":" + r.target.cwd;
  return r;
}

std::vector<std::string> remote_spec_places(const std::vector<std::string>& specs, const std::string& cwd) {
  std::vector<std::string> places;
  for (const auto& spec : specs) {
    std::error_code ec;
    fs::path path = fs::path(spec).is_absolute() ? fs::path(spec) : fs::path(cwd) / spec;
    if (!fs::is_regular_file(path, ec)) throw UserError(Location{spec}, "", "no such file");
    fs::path rel = path.lexically_normal().lexically_relative(fs::path(cwd).lexically_normal());
    if (rel.empty() || *rel.begin() == "..")
      throw UserError(Location{spec}, "",
                      fmt::format("is not in this folder ({}) or below; with --on, the spec goes to the same place "
                                  "under the folder on the login host as it has here: submit from a folder that "
                                  "holds it",
                                  cwd));
    // A place is a word for the ddpctl there too: `-n.yaml` would be an option.
    places.push_back(rel.string()[0] == '-' ? "./" + rel.string() : rel.string());
  }
  return places;
}

std::vector<std::string> remote_snapshot_upload_argv(const std::string& dir_word, const std::string& runs,
                                                     const std::string& id, long long files) {
  std::string line = std::string("set -e; ") + kRemoteDirSh +
                     "s=$d/$2/.snapshots; mkdir -p \"$s\"; t=$(mktemp -d \"$s/.incoming.XXXXXX\"); "
                     "trap 'rm -rf \"$t\"' EXIT; tar -xf - -C \"$t\"; "
                     "n=$(find \"$t/$3\" ! -type d | wc -l | tr -d ' '); "
                     "if [ \"$n\" != \"$4\" ]; then echo \"ddpctl: the snapshot arrived with $n of its $4 files\" >&2; "
                     "exit 3; fi; "
                     "mv -T \"$t/$3\" \"$s/$3\" 2>/dev/null || [ -d \"$s/$3\" ]; echo \"stored=$s/$3\"";
  return {"sh", "-c", line, "sh", dir_word, runs, id, std::to_string(files)};
}

std::vector<std::string> remote_submit_argv(const std::string& dir_word, const std::string& runs,
                                            const std::string& token, const std::vector<std::string>& places,
                                            const std::string& ddpctl, const std::vector<std::string>& words) {
  std::string line = std::string("set -e; ") + kRemoteDirSh +
                     "r=$2; tok=$3; n=$4; shift 4; mkdir -p -- \"$d\"; cd -- \"$d\"; t=$r/.incoming/$tok; "
                     "mkdir -p -- \"$t\"; trap 'rm -rf -- \"$t\"' EXIT; tar -xf - -C \"$t\"; i=0; "
                     "while [ \"$i\" -lt \"$n\" ]; do p=$1; shift; "
                     "if [ -e \"$p\" ] && ! cmp -s \"$t/spec.$i\" \"$p\"; then "
                     "b=$p.replaced-$(date -u +%Y%m%dT%H%M%SZ); cp -p -- \"$p\" \"$b\"; "
                     "echo \"ddpctl: note: $d/$p differed from the spec sent; it is kept as $d/$b\" >&2; fi; "
                     "mkdir -p -- \"$(dirname -- \"$p\")\"; cp -- \"$t/spec.$i\" \"$p.ddpctl-new.$tok\"; "
                     "mv -f -- \"$p.ddpctl-new.$tok\" \"$p\"; i=$((i + 1)); done; "
                     "set +e; \"$@\" </dev/null; rc=$?; exit $rc";
  std::vector<std::string> argv = {"sh", "-c", line, "sh", dir_word, runs, token, std::to_string(places.size())};
  argv.insert(argv.end(), places.begin(), places.end());
  argv.push_back(ddpctl);
  argv.insert(argv.end(), words.begin(), words.end());
  return argv;
}

std::vector<std::string> remote_submit_words(std::vector<std::string> words, const std::vector<std::string>& specs,
                                             const std::vector<std::string>& places, const std::string& record) {
  for (size_t s = 0; s < specs.size(); ++s) {
    for (size_t i = 1; i < words.size(); ++i) {
      if (words[i] == specs[s]) {
        words[i] = places[s];
        break;
      }
    }
  }
  if (!record.empty() && !words.empty()) words.insert(words.begin() + 1, {"--snapshot-from", record});
  return words;
}

namespace {

// The snapshot into the store of <dir_word>/<runs> there, unless it is
// there already (`present`); returns what the closing line says of it.
std::string send_snapshot(const Snapshot& sn, bool present, SshRunner& ssh, CommandRunner& local,
                          const std::string& dir_word, const std::string& runs, const std::string& scratch) {
  std::string what = fmt::format("snapshot {} ({} files, {})", sn.id.substr(0, 12), sn.files, format_bytes(sn.bytes));
  if (present) return what + " was there already";
  std::string tar = scratch + "/snapshot.tar";
  CommandResult t = local.run({"tar", "-cf", tar, "-C", fs::path(sn.dir).parent_path().string(), sn.id},
                              std::chrono::minutes(10));
  if (!t.ok()) throw UserError(fmt::format("cannot pack the snapshot {} to send it: {}", sn.dir, t.describe()));
  CommandResult u = ssh.run_with_input(remote_snapshot_upload_argv(dir_word, runs, sn.id, sn.files), tar,
                                       std::chrono::minutes(30));
  if (!u.ok())
    throw UserError(Location{"--on"}, "",
                    fmt::format("cannot send the code ({}) to {}: {}; nothing was submitted", what,
                                ssh.connection().host,
                                u.connection_failed ? u.err : plain_line(trim(u.err + "\n" + u.out), 400)));
  return what + " sent";
}

}  // namespace

int run_remote_submit(const RemoteSubmit& s, CommandRunner& local, std::ostream& err, TerminalRunner& terminal) {
  const RemoteTarget& c = s.target;
  const std::string& cwd = c.cwd;
  // Everything that can be said here is said before the first ssh call.
  std::vector<std::string> places = remote_spec_places(s.specs, cwd);
  const std::string dir_word = remote_dir_word(cwd, c.home, c.dir_option);
  const std::string runs = s.runs_option.empty() ? "runs" : s.runs_option;
  SnapshotDecision snap;
  if (!s.dry_run) {
    RunSpec spec = load_run_spec(s.specs.at(0), s.sets);
    snap = take_snapshot(spec, cwd, s.local_runs_root, !s.snapshot, local);
  }
  const std::string id = snap.snapshot ? snap.snapshot->id : "";

  RemoteSession session(c, local, terminal);
  SshRunner& ssh = session.ssh();
  RemoteSide side = probe_remote(ssh, c.host, c.version, dir_word, runs, id);
  RemoteDdpctl d = choose_remote_ddpctl(side, c.version);
  std::string ddpctl = d.path, which = d.text;
  ScratchDir scratch("ddpctl-remote");
  if (d.use == RemoteDdpctl::Use::Cannot) throw UserError(Location{"--on"}, "", fmt::format("{} has {}", c.host, d.text));
  if (d.use == RemoteDdpctl::Use::Install) {
    std::string prefix = installed_prefix();
    PortableBuild build = find_portable_build(s.portable, executable_dir() + "/ddpctl", prefix, scratch.path(), local);
    ddpctl = install_on_remote(ssh, build, c.version);
    which = fmt::format("{}, this version's portable build, installed there now from {}", plain_line(ddpctl), build.from);
  }

  // The code, once per state: a store that has it is not sent it again.
  std::string code;
  if (snap.snapshot) {
    code = send_snapshot(*snap.snapshot, side.snapshot_present, ssh, local, dir_word, runs, scratch.path());
  } else {
    code = s.dry_run ? "none sent (a dry run)" : "no snapshot sent (" + snap.off_reason + ")";
    // Said before the submit: the job will run what the folder there has.
    if (!s.dry_run)
      err << fmt::format("ddpctl: warning: no code goes with this job ({}): it runs the files in {} on {} as they "
                         "are when it starts; a git work tree here, or snapshot: {{paths: [...]}}, sends them\n",
                         snap.off_reason, plain_line(side.dir.empty() ? dir_word : side.dir), c.host);
  }

  // The specs and the snapshot's record go on the submit's own stdin.
  const std::string token = new_token();
  std::string bundle = scratch.path() + "/bundle";
  fs::create_directories(bundle);
  for (size_t i = 0; i < s.specs.size(); ++i) fs::copy_file(s.specs[i], fmt::format("{}/spec.{}", bundle, i));
  std::string record;
  if (snap.snapshot) {
    write_file_atomic(bundle + "/snapshot.json",
                      snapshot_transfer_record(*snap.snapshot, runs + "/.snapshots/" + id, s.sent_from));
    record = runs + "/.incoming/" + token + "/snapshot.json";
  }
  std::string bundle_tar = scratch.path() + "/bundle.tar";
  CommandResult t = local.run({"tar", "-cf", bundle_tar, "-C", bundle, "."}, std::chrono::minutes(1));
  if (!t.ok()) throw UserError(fmt::format("cannot pack the specs to send them: {}", t.describe()));
  std::vector<std::string> words = remote_submit_words(s.words, s.specs, places, record);
  int rc = ssh.run_attached(remote_submit_argv(dir_word, runs, token, places, ddpctl, words), SshInput::Stdin,
                            bundle_tar);
  if (rc == 255)
    throw UserError(Location{"--on"}, "",
                    fmt::format("the ssh connection to {} failed while ddpctl submitted there (ssh exited 255"
                                "): the job may or may not be queued. Nothing is lost: the submission is "
                                "recorded there before sbatch runs, and running the same command again finds the "
                                "job by its token instead of submitting a second (`ddpctl status --on {}` shows it)",
                                c.host, c.host));
  err << fmt::format("ddpctl: ran on {} in {} with {} through {}; code: {}; {} ssh call(s)\n", c.host,
                     plain_line(side.dir.empty() ? dir_word : side.dir), which, session.connection().describe(), code,
                     ssh.calls());
  return rc;
}

}  // namespace ddpctl
