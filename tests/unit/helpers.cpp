#include "helpers.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#include "runs/run_store.hpp"
#include "base/files.hpp"
#include "script/resolve.hpp"
#include "script/run_create.hpp"
#include "script/snapshot_workdir.hpp"

namespace ddpctl::test {

std::string run_bash(const std::string& script, const std::vector<std::string>& args) {
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    std::vector<std::string> words = {"bash", "--norc", "--noprofile", "-c", script, "bash"};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    execvp("bash", argv.data());
    _exit(127);
  }
  close(out[1]);
  std::string result;
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0) result.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("bash failed on: " + script.substr(0, 200));
  return result;
}

std::string source_dir() { return DDPCTL_TEST_SOURCE_DIR; }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

TempDir::TempDir() {
  std::string t = (std::filesystem::temp_directory_path() / "ddpctl-unit.XXXXXX").string();
  if (!mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
  path = t;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

Run make_local_cpu_run(const std::string& root) {
  ResolvedRun resolved = load_and_resolve(source_dir() + "/configs/local-cpu.yaml", {});
  return create_run(root, resolved, "name: local-cpu\n", {"nodes=2"}, "hash1", {{"local-cpu.sbatch", "#!/bin/bash\n"}});
}

Run make_run(const std::string& root, const std::vector<SpecPart>& parts, const std::vector<std::string>& sets,
             const std::string& hash, const std::vector<std::pair<std::string, std::string>>& scripts,
             const std::string& id) {
  std::vector<ResolvedRun> resolved;
  for (const auto& p : parts) {
    resolved.push_back(load_and_resolve(p.file, sets));
    if (!p.output_dir.empty()) resolved.back().spec.output_dir = p.output_dir;
  }
  std::vector<RunPart> run_parts;
  for (size_t i = 0; i < parts.size(); ++i) run_parts.push_back({&resolved[i], parts[i].text});
  return create_run(root, run_parts, sets, hash, scripts, id);
}

std::string new_id_of(const std::string& spec_file, const std::vector<std::string>& sets) {
  return new_run_id(load_and_resolve(spec_file, sets).spec.name, utc_now_iso());
}

void record_git_snapshot(const std::string& run_dir, const std::string& id, const std::string& store,
                         const std::string& live, const std::vector<std::pair<std::string, std::string>>& files,
                         const std::string& commit) {
  Snapshot s;
  s.mode = "git";
  s.id = id;
  s.dir = s.code_dir = store + "/" + id;
  s.live_dir = live;
  s.commit = commit;
  s.files = static_cast<long long>(files.size());
  std::filesystem::create_directories(s.dir);
  std::filesystem::create_directories(s.live_dir);
  for (const auto& [name, text] : files) write_file_atomic(s.dir + "/" + name, text);
  record_snapshot(run_dir, SnapshotDecision{s, ""});
}

void record_no_snapshot(const std::string& run_dir, const std::string& why) {
  record_snapshot(run_dir, SnapshotDecision{std::nullopt, why});
}

}  // namespace ddpctl::test
