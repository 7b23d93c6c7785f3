#include "script/container_script.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "base/shell.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

// A mount's source for the script: absolute as written, a relative one from
// the submit folder (`submit_dir`, a shell word).
std::string source_word(const std::string& src, const std::string& submit_dir) {
  return src[0] == '/' ? shell_quote(src) : submit_dir + "/" + shell_quote(src);
}

struct Mount {
  std::string src, dst, mode;  // dst "" : the same path; mode "" or ro/rw
};

Mount parse_mount(const std::string& m) {
  std::vector<std::string> parts = split(m, ':');
  Mount out{parts[0], parts.size() > 1 ? parts[1] : "", parts.size() > 2 ? parts[2] : ""};
  return out;
}

std::string mount_text(const Mount& m, bool always_dst) {
  std::string t = m.src;
  if (!m.dst.empty() || always_dst || !m.mode.empty()) t += ":" + (m.dst.empty() ? m.src : m.dst);
  if (!m.mode.empty()) t += ":" + m.mode;
  return t;
}

// What the container binds, as shell words: the job's working directory,
// the folders the job reads and writes outside the submit folder (those it
// writes go to out.mkdirs), then the profile's and the spec's mounts.
std::vector<Mount> script_mounts(const ResolvedContainer& c, const RunSpec& spec, const std::string& snapshot_dir,
                                 const std::string& snapshot_live, ContainerScript& out) {
  // The job's working directory, and the submit folder: one folder, or with
  // a snapshot the run's view of it, whose links lead into the snapshot and
  // the live folder (snapshot.sh sets both variables).
  bool view = !snapshot_live.empty();
  std::string workdir_word = view ? "\"$ddpctl_workdir\"" : "\"$PWD\"";
  std::string submit_word = view ? "\"$DDPCTL_SUBMIT_DIR\"" : "\"$PWD\"";
  // What the job reads and writes outside the submit folder (bound as a whole).
  std::vector<std::string> binds, made;
  auto add_bind = [&](const std::string& path, bool written) {
    std::string abs = outside_submit_folder(path);
    if (abs.empty()) return;
    for (const auto& b : binds)
      if (abs == b || abs.rfind(b + "/", 0) == 0) return;
    binds.push_back(abs);
    if (written) made.push_back(abs);
  };
  if (view) add_bind(snapshot_live, false);
  add_bind(spec.output_dir, true);
  add_bind(snapshot_dir, false);
  if (spec.trainer_data && *spec.trainer_data != "synthetic") add_bind(*spec.trainer_data, false);
  for (const auto& a : spec.trainer_args)
    if (a.rfind("--checkpoint-dir=", 0) == 0) add_bind(a.substr(17), true);
  for (const auto& m : made) out.mkdirs += (out.mkdirs.empty() ? "" : " ") + shell_quote(m);

  std::vector<Mount> mounts;
  mounts.push_back({workdir_word, "", ""});  // already a shell word
  for (const auto& b : binds) mounts.push_back({shell_quote(b), "", ""});
  for (const auto& m : c.mounts) {
    Mount p = parse_mount(m);
    p.src = source_word(p.src, submit_word);
    if (!p.dst.empty()) p.dst = shell_quote(p.dst);
    mounts.push_back(p);
  }
  return mounts;
}

// What each runtime's words are made of (shell words, already quoted).
struct Words {
  const ResolvedContainer& c;
  const std::vector<Mount>& mounts;
  const std::string& workdir;                // a shell word
  const std::vector<std::string>& forward;   // the variables that must reach the ranks
  const std::string& program_check;          // the task's line that checks the runtime is there
};

std::vector<std::string> apptainer_words(const Words& x, int gpus_per_node, ContainerScript& out) {
  const ResolvedContainer& c = x.c;
  // --nocolor: the step log is a file, read by status and by people.
  std::vector<std::string> w = {shell_quote(c.program), "--nocolor", "exec"};
  if (gpus_per_node > 0) w.push_back("--nv");
  for (const auto& m : x.mounts) w.insert(w.end(), {"--bind", mount_text(m, false)});
  w.insert(w.end(), {"--pwd", x.workdir});
  // --cleanenv (an option a site may set) drops the host's variables:
  // APPTAINERENV_NAME reaches the container whatever the options.
  std::string prefix = c.runtime == ContainerRuntime::Apptainer ? "APPTAINERENV_" : "SINGULARITYENV_";
  // container.env the same way, not as --env=NAME=VALUE: Apptainer reads
  // --env as a comma-separated list, so "a,B=x" would set B too and
  // "--a=1,--b=2" would be cut at the comma.
  if (!c.env.empty()) {
    out.batch_lines = "# container.env, inside the container only (" + prefix + "NAME is NAME there)\n";
    for (const auto& [name, value] : c.env) out.batch_lines += "export " + prefix + name + "=" + shell_quote(value) + "\n";
  }
  std::string cases = join(x.forward, "|");
  out.task_lines = x.program_check + "for n in $(compgen -e); do case $n in " + cases + ") export \"" + prefix +
                   "$n=${!n}\" ;; esac; done\n";
  return w;
}

std::vector<std::string> podman_words(const Words& x, int gpus_per_node, ContainerScript& out) {
  const ResolvedContainer& c = x.c;
  std::vector<std::string> w = {shell_quote(c.program), "run", "--rm", "--network=host", "--ipc=host", "--userns=keep-id"};
  if (gpus_per_node > 0) w.push_back("--device=nvidia.com/gpu=all");
  for (const auto& m : x.mounts) w.push_back("--volume=" + mount_text(m, true));
  for (const auto& n : x.forward) w.push_back("--env=" + shell_quote(n));
  for (const auto& [name, value] : c.env) w.push_back("--env=" + shell_quote(name + "=" + value));
  w.push_back("--workdir=" + x.workdir);
  out.task_lines = x.program_check;
  return w;
}

std::vector<std::string> charliecloud_words(const Words& x, ContainerScript& out) {
  const ResolvedContainer& c = x.c;
  // ch-run passes the environment through; --set-env sets the spec's.
  std::vector<std::string> w = {shell_quote(c.program)};
  for (const auto& m : x.mounts) w.push_back("--bind=" + mount_text(m, false));
  for (const auto& [name, value] : c.env) w.push_back("--set-env=" + shell_quote(name + "=" + value));
  w.push_back("--cd=" + x.workdir);
  out.task_lines = x.program_check;
  // ch-run refuses to start without $USER, which a batch job may lack.
  out.batch_lines = "[ -n \"${USER:-}\" ] || { USER=$(id -un); export USER; }  # ch-run needs it\n";
  return w;
}

std::vector<std::string> pyxis_words(const Words& x, const std::vector<std::string>& env_names, ContainerScript& out) {
  const ResolvedContainer& c = x.c;
  // srun's options: the whole task runs in the image, imported once per
  // node and job (--container-name), the environment passes through.
  out.wraps = false;
  std::vector<std::string> ms;
  for (const auto& m : x.mounts) ms.push_back(mount_text(m, true));
  std::vector<std::string> w = {"--container-image=" + shell_quote(c.image), "--container-name=ddpctl_\"$SLURM_JOB_ID\"",
                                "--container-mounts=" + join(ms, ","), "--container-workdir=" + x.workdir,
                                "--no-container-mount-home"};
  // Where the image sets one of ddpctl's variables too (PYTHONPATH, say), the job's value wins.
  if (!env_names.empty()) w.push_back("--container-env=" + join(env_names, ","));
  // container.env: for the training step alone (srun passes it in).
  std::vector<std::string> assigned;
  for (const auto& [name, value] : c.env) assigned.push_back(name + "=" + shell_assignment_value(name, value));
  out.step_env = join(assigned, " ");
  return w;
}

}  // namespace

ContainerScript container_script(const ResolvedContainer& c, const RunSpec& spec, int gpus_per_node,
                                 const std::string& snapshot_dir, const std::vector<std::string>& env_names,
                                 const std::string& snapshot_live) {
  ContainerScript out;
  std::vector<Mount> mounts = script_mounts(c, spec, snapshot_dir, snapshot_live, out);
  std::string workdir = c.workdir.empty() ? "\"$PWD\"" : shell_quote(c.workdir);
  // The variables that must reach the ranks: ddpctl's, the task's rank
  // variables, Slurm's, and the GPUs Slurm gave the task.
  std::vector<std::string> forward = {"SLURM_*", "DDPCTL_*", "RANK", "LOCAL_RANK", "NODE_RANK", "CUDA_VISIBLE_DEVICES"};
  for (const auto& n : env_names)
    if (std::find(forward.begin(), forward.end(), n) == forward.end()) forward.push_back(n);
  std::string program_check = fmt::format(
      "command -v \"$1\" >/dev/null 2>&1 || {{ echo \"ddpctl: container: $1 (container.runtime {}) is not on the PATH "
      "of $(hostname)\" >&2; exit 127; }}\n",
      runtime_name(c.runtime));
  const Words x{c, mounts, workdir, forward, program_check};
  std::vector<std::string> w;  // shell words, already quoted
  switch (c.runtime) {
    case ContainerRuntime::Apptainer:
    case ContainerRuntime::Singularity: w = apptainer_words(x, gpus_per_node, out); break;
    case ContainerRuntime::Podman: w = podman_words(x, gpus_per_node, out); break;
    case ContainerRuntime::Charliecloud: w = charliecloud_words(x, out); break;
    case ContainerRuntime::Pyxis: w = pyxis_words(x, env_names, out); break;
  }
  for (const auto& o : c.options) w.push_back(shell_quote(o));
  if (c.runtime != ContainerRuntime::Pyxis) w.push_back(shell_quote(c.image));
  if (c.runtime == ContainerRuntime::Charliecloud) w.push_back("--");
  out.words = join(w, " ");
  return out;
}

}  // namespace ddpctl
