#!/usr/bin/env python3
"""The schemas change only as docs/json.md's rule allows.

compat.py SCHEMAS RELEASED: RELEASED holds the schemas of the previous
release (tests/json/released/). Within a major a schema may only add: every
schema released is still there; each object keeps every property it had,
requires nothing it did not, and no value narrows (a type, an enum or a
const that took a value takes it still); a breaking change is a new major
(ddpctl.KIND.2.json), and the previous major's schema stays published.
Every schema is itself valid Draft 2020-12. Exit 1 naming each break.
"""
import json
import os
import sys

import jsonschema

problems = []


def types_of(s):
    t = s.get("type")
    if t is None:
        return None
    return set(t) if isinstance(t, list) else {t}


def compare(old, new, where):
    if not isinstance(old, dict) or not isinstance(new, dict):
        return
    ot, nt = types_of(old), types_of(new)
    if ot is not None and nt is not None and not ot <= nt:
        problems.append(f"{where}: type {sorted(ot)} narrowed to {sorted(nt)}")
    if "enum" in old and ("enum" not in new or not set(map(json.dumps, old["enum"])) <= set(map(json.dumps, new["enum"]))):
        problems.append(f"{where}: enum lost values: {old['enum']} -> {new.get('enum')}")
    if "const" in old and new.get("const") != old["const"]:
        problems.append(f"{where}: const {old['const']!r} changed to {new.get('const')!r}")
    if "$ref" in old and new.get("$ref") != old["$ref"]:
        problems.append(f"{where}: $ref {old['$ref']!r} changed to {new.get('$ref')!r}")
    if "pattern" in old and new.get("pattern") != old["pattern"]:
        problems.append(f"{where}: pattern {old['pattern']!r} changed to {new.get('pattern')!r}")
    added = set(new.get("required", [])) - set(old.get("required", []))
    if added:
        problems.append(f"{where}: newly required: {sorted(added)}")
    if old.get("additionalProperties", True) is not False and new.get("additionalProperties", True) is False:
        problems.append(f"{where}: additionalProperties closed")
    for key, sub in old.get("properties", {}).items():
        if key not in new.get("properties", {}):
            problems.append(f"{where}: property {key!r} removed")
        else:
            compare(sub, new["properties"][key], f"{where}.{key}")
    for key in ("items", "additionalProperties"):
        if isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
            compare(old[key], new[key], f"{where}[{key}]")
    for key, sub in old.get("$defs", {}).items():
        if key not in new.get("$defs", {}):
            problems.append(f"{where}: $defs {key!r} removed")
        else:
            compare(sub, new["$defs"][key], f"{where}#{key}")


def main():
    current, released = sys.argv[1], sys.argv[2]
    for name in sorted(os.listdir(current)):
        if name.endswith(".json"):
            with open(os.path.join(current, name)) as f:
                jsonschema.Draft202012Validator.check_schema(json.load(f))
    for name in sorted(os.listdir(released)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(current, name)
        if not os.path.exists(path):
            problems.append(f"{name}: released, and gone (a major stays published)")
            continue
        with open(os.path.join(released, name)) as f:
            old = json.load(f)
        with open(path) as f:
            new = json.load(f)
        compare(old, new, name)
    for p in problems:
        print("schema break: " + p, file=sys.stderr)
    if problems:
        print("a break within a major is a new major (docs/json.md \"Compatibility\")", file=sys.stderr)
        sys.exit(1)
    print(f"{len(os.listdir(released))} released schema(s): only additions")


if __name__ == "__main__":
    main()
