#include "helpers.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#include "script/runs.hpp"

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

}  // namespace ddpctl::test
