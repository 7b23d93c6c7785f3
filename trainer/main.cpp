// ddp-train: the per-node launcher (--nproc-per-node G) or one worker.
#include <csignal>
#include <cstdio>
#include <exception>

#include <c10/util/Exception.h>

#include "launcher.hpp"
#include "options.hpp"
#include "train.hpp"

int main(int argc, char** argv) {
  // Line by line even into a pipe or a Slurm output file, so that stdout and
  // stderr keep their order and a failed worker's last line is its last.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    ddptrain::Options o = ddptrain::parse_options(argc, argv);
    if (o.loader_only) return ddptrain::run_loader_only(o);
    if (o.nproc_per_node > 0 && !o.worker) return ddptrain::run_launcher(o.nproc_per_node, ddptrain::worker_argv(argc, argv));
    // A peer's closed socket is an error for Gloo to report (EPIPE, then
    // "a peer failed"), not a death by SIGPIPE that hides the peer: Python,
    // and so torch.distributed, ignores SIGPIPE from its start too.
    std::signal(SIGPIPE, SIG_IGN);
    if (!o.allreduce_bench.empty()) return ddptrain::run_allreduce_bench(o);
    return ddptrain::run_worker(o);
  } catch (const c10::Error& e) {
    // Torch's own errors: the message, not the C++ backtrace.
    std::fprintf(stderr, "ddp-train: error: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp-train: error: %s\n", e.what());
    return 1;
  }
}
