#include "script/container_failure.hpp"

#include "base/regex.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

bool has(const std::string& line, const char* word) { return line.find(word) != std::string::npos; }

// What a runtime's error line means, from its words.
std::string meaning(const std::string& l) {
  if (has(l, "is not on the PATH of")) return "could not start its container: the runtime is not installed on the node";
  if (has(l, "unrecognized option") && has(l, "--container-"))
    return "could not start its container: this cluster's srun has no Pyxis (--container-image)";
  if (has(l, "mount source") || has(l, "can't bind") || has(l, "enroot-mount") || has(l, "statfs") ||
      (has(l, "bind") && (has(l, "no such file") || has(l, "No such file") || has(l, "doesn't exist"))))
    return "could not start its container: a path to bind into it does not exist on the node";
  if (has(l, "executable file not found") || has(l, "can't execve") || has(l, "not found in $PATH"))
    return "could not start its program in the container: the image has no such program";
  if (has(l, "mount propagation") || has(l, "user namespace") || has(l, "setuid"))
    return "could not start its container: the runtime cannot create it on this node (mounts, namespaces)";
  if (has(l, "failed to create container filesystem") || has(l, "unsquashfs"))
    return "could not start its container: the image could not be unpacked on the node";
  if (has(l, "could not open image") || has(l, "can't stat image") || has(l, "image not known") ||
      has(l, "manifest unknown") || has(l, "failed to import") || has(l, "importing docker image") ||
      has(l, "reading manifest") || (has(l, "image") && (has(l, "no such file") || has(l, "No such file") ||
                                                          has(l, "not found") || has(l, "does not exist"))))
    return "could not start its container: the image could not be found or imported";
  return "could not start its container";
}

}  // namespace

std::optional<ContainerFailure> find_container_failure(const std::vector<std::string>& lines) {
  static const Regex runtime_error(
      R"(^(FATAL: .*|ERROR +: .*|ch-run\[\d+\]: error: .*|Error: .*|.*pyxis: .*(?:error|fail|couldn't).*|.*\[ERROR\] .*|.*enroot-\S+: .*|ddpctl: container: .*|srun: unrecognized option '--container-.*)$)");
  std::optional<ContainerFailure> found;
  static const Regex colour("\x1b\\[[0-9;]*m");
  // slurmstepd's "[2026-11-25T17:15:43.346] error: " before Pyxis's words.
  static const Regex stamp(R"(^\[[0-9T:.-]+\] (error: )?)");
  for (const auto& raw : lines) {
    std::string l = trim(stamp.replace_first(colour.replace_all(raw, ""), ""));
    RegexMatch m;
    if (!runtime_error.full_match(l, &m)) continue;
    // Podman's "Error:" only where it is about containers, not a program's own.
    if (l.rfind("Error: ", 0) == 0 && !has(l, "image") && !has(l, "container") && !has(l, "statfs") &&
        !has(l, "crun") && !has(l, "runc") && !has(l, "OCI"))
      continue;
    ContainerFailure f{meaning(l), l};
    // The most specific line wins: a generic line ("pyxis: child 7 failed")
    // says less than the reason after or before it, and among generic
    // lines the runtime's own error ("[ERROR] ...") says most.
    bool generic = f.what == "could not start its container";
    bool found_generic = found && found->what == "could not start its container";
    if (!found || (found_generic && !generic) ||
        (found_generic && generic && has(l, "ERROR") && !has(found->line, "ERROR")))
      found = f;
  }
  return found;
}

}  // namespace ddpctl
