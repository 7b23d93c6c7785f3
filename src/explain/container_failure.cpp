#include "explain/container_failure.hpp"

#include "base/regex.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {


// What a runtime's error line means, from its words.
std::string meaning(const std::string& l) {
  if (contains(l, "is not on the PATH of")) return "could not start its container: the runtime is not installed on the node";
  if (contains(l, "unrecognized option") && contains(l, "--container-"))
    return "could not start its container: this cluster's srun has no Pyxis (--container-image)";
  if (contains(l, "mount source") || contains(l, "can't bind") || contains(l, "enroot-mount") || contains(l, "statfs") ||
      (contains(l, "bind") && (contains(l, "no such file") || contains(l, "No such file") || contains(l, "doesn't exist"))))
    return "could not start its container: a path to bind into it does not exist on the node";
  if (contains(l, "executable file not found") || contains(l, "can't execve") || contains(l, "not found in $PATH"))
    return "could not start its program in the container: the image has no such program";
  if (contains(l, "mount propagation") || contains(l, "user namespace") || contains(l, "setuid"))
    return "could not start its container: the runtime cannot create it on this node (mounts, namespaces)";
  if (contains(l, "failed to create container filesystem") || contains(l, "unsquashfs"))
    return "could not start its container: the image could not be unpacked on the node";
  if (contains(l, "could not open image") || contains(l, "can't stat image") || contains(l, "image not known") ||
      contains(l, "manifest unknown") || contains(l, "failed to import") || contains(l, "importing docker image") ||
      contains(l, "reading manifest") || (contains(l, "image") && (contains(l, "no such file") || contains(l, "No such file") ||
                                                          contains(l, "not found") || contains(l, "does not exist"))))
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
    if (l.rfind("Error: ", 0) == 0 && !contains(l, "image") && !contains(l, "container") && !contains(l, "statfs") &&
        !contains(l, "crun") && !contains(l, "runc") && !contains(l, "OCI"))
      continue;
    ContainerFailure f{meaning(l), l};
    // The most specific line wins: a generic line ("pyxis: child 7 failed")
    // says less than the reason after or before it, and among generic
    // lines the runtime's own error ("[ERROR] ...") says most.
    bool generic = f.what == "could not start its container";
    bool found_generic = found && found->what == "could not start its container";
    if (!found || (found_generic && !generic) ||
        (found_generic && generic && contains(l, "ERROR") && !contains(found->line, "ERROR")))
      found = f;
  }
  return found;
}

}  // namespace ddpctl
