#pragma once
#include <cstdint>
#include <string>
#include <vector>
// One rank: rendezvous, data, model and optimizer, resume, then its epochs
// (epoch.hpp), and at the end the proof that every replica is the same.
#include "options.hpp"

namespace ddptrain {

// Returns the process exit status (0, or kStoppedForRequeue after a stop).
int run_worker(const Options& o);

// --loader-only: one epoch of rank 0's batches of a 1-rank run (at most
// --max-steps), built by --workers threads with nothing consuming them but
// this loop; prints one JSON line: images per second after the first batch.
int run_loader_only(const Options& o);
// --allreduce-bench: the all-reduce across the ranks at each size, timed
// (the fabric check, docs/trainer.md); one JSON line per size on rank 0.
int run_allreduce_bench(const Options& o);
// "1M,16M,256M" in bytes (K, M, G: 1024s); throws naming the word.
std::vector<int64_t> parse_bench_sizes(const std::string& text);

}  // namespace ddptrain
