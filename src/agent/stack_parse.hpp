#pragma once
// Threads' stacks read from the text each tool prints: gdb's backtraces,
// py-spy's dumps, Python's faulthandler; one model (ThreadStack, StackFrame)
// for the culprit decision to read (culprit.hpp). Each format has a recorded
// example in tests/unit/data/stacks/.
#include <string>
#include <vector>

namespace ddpctl {

enum class StackFormat { Gdb, PySpy, Faulthandler };
std::string stack_format_name(StackFormat f);  // "gdb", "py-spy", "faulthandler"

struct StackFrame {
  std::string function;  // "on_step_end", "c10d::Work::wait", "??"
  std::string file;      // "hang.py", "/usr/lib/.../libgloo.so.0"; "" when unknown
  int line = 0;          // 0: unknown
  bool python = false;   // a Python frame (py-spy, faulthandler), else native (gdb)
};

struct ThreadStack {
  StackFormat format = StackFormat::Gdb;
  std::string name;   // "Thread 1 (LWP 17721 \"python3\")", "MainThread"
  bool main = false;  // the process's main thread (gdb's thread 1; a Python stack ending in <module>)
  std::vector<StackFrame> frames;  // innermost first
};

// Each format's parser reads only its own lines, so a text holding several
// (a rank's faulthandler dump and its gdb backtrace) is read by all three.
std::vector<ThreadStack> parse_gdb_stacks(const std::string& text);
std::vector<ThreadStack> parse_py_spy_stacks(const std::string& text);
std::vector<ThreadStack> parse_faulthandler_stacks(const std::string& text);
std::vector<ThreadStack> parse_stacks(const std::string& text);

// Any frame at all among `threads` (a gdb that did not finish in time gave none).
bool has_frames(const std::vector<ThreadStack>& threads);
// The lines of a stacks text, without a trailing '\r'.
std::vector<std::string> stack_text_lines(const std::string& text);

}  // namespace ddpctl
