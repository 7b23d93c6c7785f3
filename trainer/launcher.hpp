#pragma once
// The per-node launcher: starts one worker per GPU (or per CPU rank) with its
// rank in the environment, forwards the stop signals to them, and ends
// them all as soon as one fails, naming the rank, how it ended and its last line.
#include <csignal>
#include <string>
#include <vector>

namespace ddptrain {

// Exit status of a worker (and of the launcher) that stopped at a step
// boundary on a stop signal after rank 0 checkpointed (EX_TEMPFAIL). The sbatch
// script's requeue trap requeues on it (and on any failure after it forwarded
// the signal).
constexpr int kStoppedForRequeue = 75;
// The launcher's exit status when its workers stopped only because a peer on
// another node failed (ddpctl's kPeerFailedExit): the in-job restart then
// blames the node whose own worker failed, not the first one srun names.
constexpr int kStoppedForPeer = 76;

// Signals that ask for a checkpoint and a stop at the next step boundary:
// every signal a spec's requeue.signal may name (Slurm sends it before the
// time limit), and SIGTERM/SIGINT (preemption, scancel, Ctrl-C).
constexpr int kStopSignals[] = {SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGHUP, SIGURG};

// Runs the workers (`self` re-executed with `worker_args`) and returns the
// launcher's exit status.
int run_launcher(int nproc_per_node, const std::vector<std::string>& worker_args);

}  // namespace ddptrain
