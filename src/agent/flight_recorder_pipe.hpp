#pragma once
// The Flight Recorder's dumps, orchestrated from the job (docs/running.md
// "Flight Recorder"): dump first, then act. The script points torch at
// per-attempt files under the log base (TORCH_FR_DUMP_TEMP_FILE: a rank's
// dump is <prefix><rank>; TORCH_NCCL_DEBUG_INFO_PIPE_FILE: its pipe is
// <stem><rank>.pipe, made by ProcessGroupNCCL, or by ddpctl's sitecustomize
// for a Python rank whose default group has no NCCL). When the watchdog
// asks, each node's sampler writes a byte to the pipe of every rank on its
// node (a FIFO is a meeting point in one kernel, so only the node's own
// agent can reach it), and the watchdog collects the dumps, a bounded time
// (flight_recorder.hpp).
#include <map>
#include <string>
#include <vector>


namespace ddpctl {

std::string fr_pipe_path(const std::string& stem, int rank);     // <stem><rank>.pipe (torch's name)
std::string fr_dump_path(const std::string& prefix, int rank);   // <prefix><rank> (torch's name)

enum class PipeAsk {
  Asked,     // a byte was written: a reader is there
  NoPipe,    // no such file: torch made no pipe (no Flight Recorder, no process group yet)
  NoReader,  // a pipe nobody reads any more (the rank ended), or a pipe of another node
  NotAPipe,  // something else is there: nothing is written to it
  Failed,    // the open or the write failed otherwise
};
std::string pipe_ask_name(PipeAsk a);  // "asked", "no pipe", "no reader", "not a pipe", "failed"

// Never blocks: the open and the write are non-blocking, and a file that is
// not a FIFO is not opened. `why`: the error, for Failed.
PipeAsk ask_dump_pipe(const std::string& path, std::string* why = nullptr);

struct FrAsk {
  int rank = 0;
  PipeAsk outcome = PipeAsk::NoPipe;
  std::string node;
};
// The part of a node's stacks file that says which ranks were asked:
// "## flight recorder: dump pipes <stem>N.pipe" then "rank 0: asked".
std::string fr_asks_section(const std::string& stem, const std::vector<FrAsk>& asks);
// That part read back (none: the node's agent did not ask; no stem).
std::vector<FrAsk> read_fr_asks(const std::string& stacks_text, const std::string& node);

// The sitecustomize's part (stacks_hook.cpp puts it in): a rank whose
// default group has no NCCL gets a pipe of its own in a background thread
// that dumps torch's recorder (torch._C._distributed_c10d._dump_fr_trace)
// when written to, as NCCL's does. Only with the two variables set, in a
// process with RANK, once its process group is up; a torch without that
// function (1.13) gets nothing.
std::string python_fr_hook_text();

// A file's identity, so that only a dump written after the ask counts.
struct FileId {
  long long size = -1, mtime_ns = 0, inode = 0;
  bool operator==(const FileId& o) const { return size == o.size && mtime_ns == o.mtime_ns && inode == o.inode; }
};
FileId file_id(const std::string& path);  // size -1: not a regular file there
// The dumps that are there now, by rank (files named <prefix><digits>).
std::map<int, FileId> existing_dumps(const std::string& prefix);

}  // namespace ddpctl
