#include "agent/stack_parse.hpp"

#include <algorithm>

#include "base/regex.hpp"
#include "base/text.hpp"

namespace ddpctl {

std::string stack_format_name(StackFormat f) {
  switch (f) {
    case StackFormat::Gdb: return "gdb";
    case StackFormat::PySpy: return "py-spy";
    case StackFormat::Faulthandler: return "faulthandler";
  }
  return "gdb";
}

std::vector<std::string> stack_text_lines(const std::string& text) {
  std::vector<std::string> out = split(text, '\n');
  for (auto& l : out)
    if (!l.empty() && l.back() == '\r') l.pop_back();
  return out;
}

bool has_frames(const std::vector<ThreadStack>& threads) {
  return std::any_of(threads.begin(), threads.end(), [](const ThreadStack& t) { return !t.frames.empty(); });
}

namespace {

// A Python stack's outermost frame is <module> on the main thread only, or
// runpy's _run_module_as_main for a program run as `python -m` (torchrun's).
void mark_python_main(ThreadStack& t) {
  if (!t.frames.empty() && (t.frames.back().function == "<module>" || t.frames.back().function == "_run_module_as_main"))
    t.main = true;
}

}  // namespace

// "Thread 5 (Thread 0x7ffb5393e6c0 (LWP 17783) "pt_tcpstore"):" then
// "#3  0x00007ffb791c5f76 in poll () from /usr/lib/.../libc.so.6",
// "#1  futex_wait_simple (private=...) at ../sysdeps/nptl/futex-internal.h:177"
// (an inlined frame has no address), a long frame going on in "   from LIB".
// A bare `bt` (a core's) has frames and no thread line: one thread.
std::vector<ThreadStack> parse_gdb_stacks(const std::string& text) {
  static const Regex thread_line(R"re(^Thread (\d+) \((.*)\):$)re");
  static const Regex frame_line(R"re(^#(\d+) +(?:0x[0-9a-fA-F]+ in )?(.*)$)re");
  static const Regex at_file(R"re( at (\S+):(\d+)$)re");
  static const Regex from_lib(R"re(^\s*from ?(\S+)$)re");
  std::vector<ThreadStack> out;
  for (const auto& line : stack_text_lines(text)) {
    RegexMatch m;
    if (thread_line.search(line, &m)) {
      ThreadStack t;
      t.format = StackFormat::Gdb;
      t.name = "Thread " + m.str(1) + " (" + m.str(2) + ")";
      t.main = m.str(1) == "1";
      out.push_back(t);
      continue;
    }
    if (frame_line.search(line, &m)) {
      if (out.empty() || (m.str(1) == "0" && !out.back().frames.empty())) {
        ThreadStack t;  // a bare backtrace
        t.format = StackFormat::Gdb;
        t.name = "the backtrace";
        t.main = true;
        out.push_back(t);
      }
      std::string rest = m.str(2);
      StackFrame f;
      // The name runs to its argument list: "c10d::Work::wait(std::chrono::...) ()",
      // "poll ()", "futex_wait (private=...)".
      size_t paren = rest.find('(');
      f.function = trim(paren == std::string::npos ? rest : rest.substr(0, paren));
      // glibc's internal aliases, with its debugging symbols: "__GI___clock_nanosleep" is clock_nanosleep.
      if (f.function.rfind("__GI_", 0) == 0) f.function = f.function.substr(f.function.find_first_not_of('_', 5));
      RegexMatch fm;
      if (at_file.search(rest, &fm)) {
        f.file = fm.str(1);
        f.line = std::stoi(fm.str(2));
      } else if (size_t from = rest.rfind(" from "); from != std::string::npos) {
        f.file = trim(rest.substr(from + 6));
      }
      out.back().frames.push_back(f);
      continue;
    }
    if (!out.empty() && !out.back().frames.empty() && from_lib.search(line, &m) &&
        out.back().frames.back().file.empty())
      out.back().frames.back().file = m.str(1);
  }
  return out;
}

// `Thread 688514 (idle): "MainThread"` then `    wait (threading.py:306)`;
// --native adds native frames the same way (`    ncclKernel (libnccl.so.2)`).
std::vector<ThreadStack> parse_py_spy_stacks(const std::string& text) {
  static const Regex thread_line(R"re(^Thread (0x[0-9A-Fa-f]+|\d+) \(([^)]*)\)(?:: "(.*)")?$)re");
  static const Regex frame_line(R"re(^    (\S.*?) \(([^():]+?)(?::(\d+))?\)$)re");
  std::vector<ThreadStack> out;
  bool in_thread = false;
  for (const auto& line : stack_text_lines(text)) {
    RegexMatch m;
    if (thread_line.search(line, &m)) {
      ThreadStack t;
      t.format = StackFormat::PySpy;
      t.name = m.matched(3) ? m.str(3) : "Thread " + m.str(1);
      t.main = m.str(3) == "MainThread";
      out.push_back(t);
      in_thread = true;
      continue;
    }
    if (in_thread && frame_line.search(line, &m)) {
      StackFrame f;
      f.function = m.str(1);
      f.file = m.str(2);
      f.line = m.matched(3) ? std::stoi(m.str(3)) : 0;
      f.python = f.file.size() > 3 && f.file.compare(f.file.size() - 3, 3, ".py") == 0;
      out.back().frames.push_back(f);
      continue;
    }
    // Locals (--locals) are indented deeper; anything else ends the thread.
    if (line.rfind("        ", 0) != 0) in_thread = false;
  }
  for (auto& t : out) mark_python_main(t);
  return out;
}

// Python's faulthandler: `Thread 0x00007f... (most recent call first):` or,
// for the thread that took the signal, `Current thread 0x... [python3] (most
// recent call first):` (3.14 names the thread in brackets), then
// `  File "/tmp/hang.py", line 15 in on_step_end`. Its notes among a
// thread's lines (CPython's traceback.c) go on with the thread:
// `  Garbage-collecting` (the dump came while the collector ran; the frames
// follow), `  <no Python frame>`, `  ...` (deeper than it prints).
std::vector<ThreadStack> parse_faulthandler_stacks(const std::string& text) {
  static const Regex thread_line(R"re(^(Current thread|Thread) (0x[0-9a-fA-F]+)(?: \[(.*)\])? \(most recent call first\):$)re");
  static const Regex frame_line(R"re(^  File "(.*)", line (\d+|\?\?\?) in (.*)$)re");
  static const Regex note_line(R"re(^  (Garbage-collecting|<[^>]*>|\.\.\.)$)re");
  std::vector<ThreadStack> out;
  bool in_thread = false;
  for (const auto& line : stack_text_lines(text)) {
    RegexMatch m;
    if (thread_line.search(line, &m)) {
      ThreadStack t;
      t.format = StackFormat::Faulthandler;
      t.name = m.str(1) + " " + m.str(2) + (m.matched(3) ? " [" + m.str(3) + "]" : "");
      out.push_back(t);
      in_thread = true;
      continue;
    }
    if (in_thread && frame_line.search(line, &m)) {
      StackFrame f;
      f.file = m.str(1);
      f.line = m.str(2) == "???" ? 0 : std::stoi(m.str(2));
      f.function = m.str(3);
      f.python = true;
      out.back().frames.push_back(f);
      continue;
    }
    if (in_thread && note_line.search(line, &m)) continue;
    in_thread = false;
  }
  for (auto& t : out) mark_python_main(t);
  return out;
}

std::vector<ThreadStack> parse_stacks(const std::string& text) {
  std::vector<ThreadStack> out = parse_faulthandler_stacks(text);
  for (auto& t : parse_py_spy_stacks(text)) out.push_back(std::move(t));
  for (auto& t : parse_gdb_stacks(text)) out.push_back(std::move(t));
  return out;
}

}  // namespace ddpctl
