#pragma once
// The one envelope of every JSON document ddpctl prints for programs
// (docs/json.md): what the document is and its major version
// ("schema": "ddpctl.status/1", whose JSON Schema is schemas/ddpctl.status.1.json),
// ddpctl's version and commit, and its errors and warnings, each error with
// the file, line, column and field the human message names. The kind's own
// keys sit beside them. Within a major a document only gains keys: a
// program ignores what it does not know; a breaking change is a new major,
// and the previous one stays printable (--json=1).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/diagnostics.hpp"

namespace ddpctl {

// The majors of the documents this ddpctl prints: its newest, and the oldest
// it still prints on request.
inline constexpr int kJsonMajor = 1;
inline constexpr int kOldestJsonMajor = 1;

// "ddpctl.<kind>/<major>".
std::string json_schema_id(const std::string& kind, int major = kJsonMajor);

// A document of `kind`: {"schema", "ddpctl": {version, commit}, "errors": [],
// "warnings": []}.
nlohmann::json json_document(const std::string& kind, int major = kJsonMajor);

// A problem as the envelope's errors carry it: {"message", and where known
// "file", "line", "column", "field"}.
nlohmann::json diagnostic_json(const Diagnostic& d);

// The document a failing command prints with --json: ddpctl.error, its
// errors from `e`, the exit status it ends with.
nlohmann::json error_document(const std::vector<Diagnostic>& errors, int exit_code);

// Whether the words after `ddpctl` ask for JSON (--json, --json=N, or
// --format json), and which major (-1: none asked; 0: the bare documents of
// before the envelope, which status and report still print on request).
int json_major_asked(const std::vector<std::string>& words);

// The published JSON Schemas (2020-12), one per document kind and major:
// <data dir>/schemas/ddpctl.<kind>.<major>.json (installed with ddpctl).
std::string json_schema_dir();
// Every kind and major published there: {"status/1", "event/1", ...}, sorted.
std::vector<std::string> json_schema_kinds();
// The schema of `kind` ("status", "status/1" or "ddpctl.status/1"; without
// a major the newest): its text. A UserError naming the kinds there are.
std::string json_schema_text(const std::string& kind);

}  // namespace ddpctl
