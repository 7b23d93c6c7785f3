#!/usr/bin/env python3
"""Validates ddpctl's JSON documents against the published schemas (schemas/).

validate.py SCHEMAS_DIR [FILE...]: each FILE (or stdin) holds one document
(indented or not) or NDJSON (one document per line: --watch, events); each
must name a kind ("schema": "ddpctl.KIND/N") whose schema is in SCHEMAS_DIR,
and validate against it with Debian's python3-jsonschema (Draft 2020-12).
Exit 1, naming the file, line and path of each problem, when any fails: a
document of a kind with no schema fails too.
"""
import json
import os
import sys

import jsonschema


def load_schemas(folder):
    store = {}
    for name in sorted(os.listdir(folder)):
        if name.startswith("ddpctl.") and name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                s = json.load(f)
            jsonschema.Draft202012Validator.check_schema(s)
            store[s["$id"]] = s
            store[name] = s
    return store


def validator_for(store, name):
    schema = store[name]
    try:  # jsonschema >= 4.18
        from referencing import Registry, Resource
        registry = Registry().with_resources(
            [(k, Resource.from_contents(v)) for k, v in store.items() if k.startswith("http")])
        return jsonschema.Draft202012Validator(schema, registry=registry)
    except ImportError:  # Debian bookworm's 4.10
        resolver = jsonschema.RefResolver(base_uri=schema["$id"], referrer=schema, store=store)
        return jsonschema.Draft202012Validator(schema, resolver=resolver)


def documents(text):
    text = text.strip()
    if not text:
        return []
    try:
        return [(1, json.loads(text))]
    except json.JSONDecodeError:
        return [(i + 1, json.loads(line)) for i, line in enumerate(text.split("\n")) if line.strip()]


def main():
    store = load_schemas(sys.argv[1])
    problems = 0
    count = 0
    for path in sys.argv[2:] or ["-"]:
        text = sys.stdin.read() if path == "-" else open(path).read()
        try:
            docs = documents(text)
        except json.JSONDecodeError as e:
            print(f"{path}: not JSON: {e}", file=sys.stderr)
            problems += 1
            continue
        if not docs:
            print(f"{path}: no document", file=sys.stderr)
            problems += 1
        for line, doc in docs:
            count += 1
            kind = doc.get("schema") if isinstance(doc, dict) else None
            if not isinstance(kind, str) or "/" not in kind:
                print(f"{path}:{line}: no \"schema\" naming its kind: {str(doc)[:200]}", file=sys.stderr)
                problems += 1
                continue
            name = kind.replace("/", ".") + ".json"
            if name not in store:
                print(f"{path}:{line}: {kind}: no published schema ({name} is not in {sys.argv[1]})", file=sys.stderr)
                problems += 1
                continue
            for err in sorted(validator_for(store, name).iter_errors(doc), key=lambda e: list(e.path)):
                where = "/".join(str(p) for p in err.path) or "(the document)"
                print(f"{path}:{line}: {kind}: {where}: {err.message[:300]}", file=sys.stderr)
                problems += 1
    if problems:
        sys.exit(1)
    print(f"{count} document(s) valid")


if __name__ == "__main__":
    main()
