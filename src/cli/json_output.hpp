#pragma once
// --json on every command that prints (docs/json.md): while a command runs
// in JSON mode, what it would print for a person is kept, not printed (its
// lines become the document's "said", its warnings and notes the
// envelope's), the facts its workflow states for programs (Output::fact:
// the run it made, its jobs) become the document's keys, and so do the
// runs and jobs it made or asked to cancel, as its events tell (the same
// keys everywhere: run, dir, jobs [{job, shape, outcome, ...}], cancelled), and when it ends
// one document of its kind goes to stdout: ddpctl.<command>/1, or
// ddpctl.error/1 with the errors when it failed. The exit status is the
// same as without --json. Nothing is painted in colour meanwhile.
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/diagnostics.hpp"

namespace ddpctl::cli {

class JsonCapture {
 public:
  // Starts capturing std::cout and std::cerr for the document `kind` of
  // major `major`.
  JsonCapture(std::string kind, int major);
  ~JsonCapture();
  JsonCapture(const JsonCapture&) = delete;
  JsonCapture& operator=(const JsonCapture&) = delete;

  // A key of the document (the last said wins).
  void fact(const std::string& key, const nlohmann::json& value);
  // For a command that prints a document as things change (status --watch):
  // this document now, a line of its own on stdout; the end prints none.
  void emit(nlohmann::json doc);
  // The envelope of this capture's kind, with the warnings and notes said so far.
  nlohmann::json envelope() const;
  // Stops capturing and prints the command's document (or, with `errors`,
  // the error document ending with `exit_code`).
  void finish(int exit_code, const std::vector<Diagnostic>& errors = {});
  // --on: the ddpctl there printed its own document on this stdout; this
  // one prints none, unless ssh itself failed (`exit_code` 255).
  void relayed() { relayed_ = true; }

 private:
  nlohmann::json document(int exit_code, const std::vector<Diagnostic>& errors) const;
  void restore();
  // The runs and jobs it made, and those it asked to cancel, from the
  // events this process wrote (runs/events.hpp's observer).
  void add_event_facts(nlohmann::json& doc) const;
  static void on_event(const std::string& run_dir, const nlohmann::json& event);
  std::string kind_;
  int major_;
  std::ostringstream out_, err_;
  // stderr goes on to the terminal as well: a person watching sees what
  // happens; the document has it too.
  class Tee : public std::streambuf {
   public:
    Tee(std::streambuf* a, std::streambuf* b) : a_(a), b_(b) {}

   protected:
    int overflow(int c) override {
      if (c == EOF) return 0;
      a_->sputc(static_cast<char>(c));
      return b_->sputc(static_cast<char>(c));
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
      a_->sputn(s, n);
      return b_->sputn(s, n);
    }
    int sync() override { return a_->pubsync() | b_->pubsync(); }

   private:
    std::streambuf *a_, *b_;
  };
  std::unique_ptr<Tee> tee_;
  bool relayed_ = false;
  int observer_ = 0;
  std::streambuf* cout_ = nullptr;
  std::streambuf* cerr_ = nullptr;
  nlohmann::json facts_ = nlohmann::json::object();
  bool emitted_ = false;
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, nlohmann::json>> events_;  // run folder, event
};

// The capture of this process's command, when it runs in JSON mode
// (nullptr otherwise): stdout is one per process, and so is its document.
JsonCapture* json_capture();
// States a fact for the document of JSON mode; nothing without it.
void json_fact(const std::string& key, const nlohmann::json& value);

}  // namespace ddpctl::cli
