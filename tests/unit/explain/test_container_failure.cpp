// A container runtime's own errors in a job's logs, in words
// (container_failure.cpp): Apptainer, Podman, Charliecloud, Pyxis.
#include "catch.hpp"

#include <string>
#include <vector>

#include "explain/container_failure.hpp"

using namespace ddpctl;

TEST_CASE("container: runtimes' errors in words") {
  auto what = [](std::vector<std::string> lines) {
    auto f = find_container_failure(lines);
    return f ? f->what : std::string("none");
  };
  CHECK(what({"FATAL:   could not open image /x/torch.sif: failed to retrieve path for /x/torch.sif: lstat "
              "/x/torch.sif: no such file or directory"}) ==
        "could not start its container: the image could not be found or imported");
  CHECK(what({"FATAL:   container creation failed: mount hook function failure: mount /data->/data error: while "
              "mounting /data: mount source /data doesn't exist"}) ==
        "could not start its container: a path to bind into it does not exist on the node");
  CHECK(what({"FATAL:   \"python9\": executable file not found in $PATH"}) ==
        "could not start its program in the container: the image has no such program");
  CHECK(what({"ddpctl: container: apptainer (container.runtime apptainer) is not on the PATH of n1"}) ==
        "could not start its container: the runtime is not installed on the node");
  CHECK(what({"ch-run[812]: error: can't stat image: /i/torch: No such file or directory (ch_core.c:437 2)"}) ==
        "could not start its container: the image could not be found or imported");
  CHECK(what({"slurmstepd: error: pyxis: child 1234 failed with error code: 1",
              "slurmstepd: error: pyxis: failed to import docker image",
              "slurmstepd: error: pyxis: printing enroot log file:",
              "slurmstepd: error: pyxis:     [ERROR] URL https://nvcr.io/proxy_auth returned error code: 401 Unauthorized"}) ==
        "could not start its container: the image could not be found or imported");
  // As Pyxis reported it for real on the local 26.05 cluster (tasks' logs).
  auto pyxis = find_container_failure({"[2026-11-25T17:15:43.346] error: pyxis: child 31025 failed with error code: 1",
                                       "[2026-11-25T17:15:43.346] error: pyxis: couldn't join user namespace: Invalid argument",
                                       "[2026-11-25T17:15:43.347] error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1"});
  REQUIRE(pyxis);
  CHECK(pyxis->what == "could not start its container: the runtime cannot create it on this node (mounts, namespaces)");
  CHECK(pyxis->line == "pyxis: couldn't join user namespace: Invalid argument");
  CHECK(what({"[2026-11-25T17:14:17.320] [4.1] error: pyxis: child 31542 failed with error code: 1",
              "[2026-11-25T17:14:17.320] error: pyxis: failed to create container filesystem for image: /i/torch.sqsh"}) ==
        "could not start its container: the image could not be unpacked on the node");
  pyxis = find_container_failure({"[2026-11-25T17:13:03.785] error: pyxis: child 31025 failed with error code: 1",
                                  "[2026-11-25T17:13:03.786] error: pyxis:     [ERROR] Command not found: column"});
  REQUIRE(pyxis);
  CHECK(pyxis->line == "pyxis:     [ERROR] Command not found: column");
  CHECK(what({"srun: unrecognized option '--container-image=x'"}) ==
        "could not start its container: this cluster's srun has no Pyxis (--container-image)");
  CHECK(what({"Error: docker://nope:1: image not known"}) ==
        "could not start its container: the image could not be found or imported");
  CHECK(what({"\x1b[91mERROR  : Failed to set mount propagation: Invalid argument", "\x1b[0m"}) ==
        "could not start its container: the runtime cannot create it on this node (mounts, namespaces)");
  // A program's own errors are not the runtime's.
  CHECK(what({"Traceback (most recent call last):", "ValueError: Error: bad batch"}) == "none");
  CHECK(what({"Error: the loss is NaN"}) == "none");
}

