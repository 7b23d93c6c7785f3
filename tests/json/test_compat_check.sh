#!/usr/bin/env bash
# tests/json/compat.py catches what it must: a property removed, a field
# newly required, a type narrowed, a schema dropped; additions pass.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
check() { /usr/bin/python3 "$here/compat.py" "$T/new" "$here/released" >"$T/out" 2>&1; }
fresh() { rm -rf "$T/new"; cp -r "$here/released" "$T/new"; }
edit() { /usr/bin/python3 -c "import json,sys; p=sys.argv[1]; d=json.load(open(p)); exec(sys.argv[2]); json.dump(d, open(p, 'w'))" "$T/new/$1" "$2"; }
fresh; check || fail "the released schemas against themselves: $(cat "$T/out")"
fresh; edit ddpctl.submit.1.json 'd["properties"]["sites2"] = {"type": "array"}'
check || fail "an added property refused: $(cat "$T/out")"
fresh; edit ddpctl.submit.1.json 'del d["properties"]["run"]'
! check || fail "a removed property passed"
grep -q "property 'run' removed" "$T/out" || fail "$(cat "$T/out")"
fresh; edit ddpctl.status.1.json 'd["required"].append("notes")'
! check || fail "a newly required field passed"
fresh; edit ddpctl.event.1.json 'd["properties"]["job"] = {"type": "string"}'
! check || fail "a narrowed type passed: $(cat "$T/out")"
fresh; rm "$T/new/ddpctl.plan.1.json"
! check || fail "a dropped schema passed"
grep -q "released, and gone" "$T/out" || fail "$(cat "$T/out")"
echo ok
