#pragma once
// The readers' common ground (internal to slurm_parse_*.cpp): how each data
// parser generation writes a --json field (Reader: slurm_answer.hpp's header
// says which generation differs how), Slurm's own errors in a document, and
// the values every reader shares. A new generation's change of a field's
// shape is an edit of Reader alone.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "slurm/slurm_answer.hpp"
#include "base/text.hpp"

namespace ddpctl::slurm_json {

using nlohmann::json;

// "2026-11-22T08:11:57" in local time; "N/A", "Unknown", "None": none.
std::optional<long long> parse_slurm_date(const std::string& s);
// A time limit as squeue/scontrol print it; none for UNLIMITED and the like.
std::optional<long long> parse_limit(const std::string& s);
// The leading number of `s`, 0 when there is none.
int to_int(const std::string& s);

// Throws SlurmAnswerError when the document carries Slurm's "errors".
void throw_json_errors(const json& doc);
// The document, or a SlurmFormatError naming `command` when it is not JSON.
json parse_document(const std::string& text, const std::string& command);

// The data parser of a --json document, and its fields read by the shapes
// that parser writes (slurm_answer.hpp).
class Reader {
 public:
  Reader(const json& doc, const std::string& command) : src_(json_source(doc, command)), command_(command) {}
  const JsonSource& source() const { return src_; }
  bool flag_arrays() const { return src_.parser >= 40; }

  // A string field; absent or null is empty.
  std::string str(const json& o, const char* key, const std::string& where) const {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return "";
    if (!it->is_string()) bad(where, key, "a string", *it);
    return it->get<std::string>();
  }
  // A plain integer field; absent or null is 0.
  long long integer(const json& o, const char* key, const std::string& where) const {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return 0;
    if (!it->is_number_integer()) bad(where, key, "an integer", *it);
    return it->get<long long>();
  }
  // {set, infinite, number}: the number when set and finite.
  std::optional<long long> wrapped(const json& o, const char* key, const std::string& where) const {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return std::nullopt;
    if (!it->is_object() || !it->contains("number")) bad(where, key, "a {set, infinite, number} object", *it);
    if (!it->value("set", false) || it->value("infinite", false)) return std::nullopt;
    const json& n = (*it)["number"];
    if (!n.is_number_integer()) bad(where, std::string(key) + ".number", "an integer", n);
    return n.get<long long>();
  }
  // A number that is plain up to `last_plain` and wrapped from then on.
  std::optional<long long> number(const json& o, const char* key, const std::string& where, int last_plain) const {
    if (src_.parser > last_plain) return wrapped(o, key, where);
    return integer(o, key, where);
  }
  // A time: 0 and unset are unknown.
  std::optional<long long> time(const json& o, const char* key, const std::string& where) const {
    auto t = number(o, key, where, 39);
    if (t && *t > 0) return t;
    return std::nullopt;
  }
  // A list of strings: an array, or (before 23.02's node records) a comma list.
  std::vector<std::string> strings(const json& o, const char* key, const std::string& where) const {
    std::vector<std::string> out;
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return out;
    if (it->is_string()) {
      for (const auto& part : split(it->get<std::string>(), ','))
        if (!part.empty()) out.push_back(part);
      return out;
    }
    if (!it->is_array()) bad(where, key, "an array of strings", *it);
    for (const auto& e : *it) {
      if (!e.is_string()) bad(where, key, "an array of strings", *it);
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  // The array `key` of the document.
  const json& list(const json& doc, const char* key) const {
    auto it = doc.find(key);
    if (it == doc.end() || !it->is_array()) bad("", key, "an array", it == doc.end() ? json() : *it);
    return *it;
  }

  [[noreturn]] void bad(const std::string& where, const std::string& key, const char* expected, const json& got) const {
    std::string kind = got.is_null() ? "missing" : std::string("a ") + got.type_name();
    throw SlurmFormatError(fmt::format("cannot read {} of {}: {}{} should be {} but is {}; ddpctl reads Slurm 22.05 "
                                       "to 26.05 (data parsers v0.0.38 to v0.0.45)",
                                       command_, src_.describe(), where.empty() ? "" : where + ".", key, expected,
                                       kind));
  }

 private:
  JsonSource src_;
  std::string command_;
};

}  // namespace ddpctl::slurm_json
