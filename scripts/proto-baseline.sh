#!/usr/bin/env bash
# Record the released contract: proto/released/domino.v1.txtpb, the buf image (descriptors, no
# comments) of proto/ that `buf breaking` compares the working contract against (proto/buf.yaml,
# tests/test_proto_contract.py). Run it when a version is released (the version of pyproject.toml),
# never to make a breaking change pass: a change that breaks domino.v1 goes into a new package, domino.v2.
# Text format, so a release's diff shows what its contract added.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
buf="$root/scripts/buf/node_modules/.bin/buf"
[ -x "$buf" ] || bash "$root/scripts/buf-tools.sh"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/pyproject.toml")"
out="$root/proto/released/domino.v1.txtpb"
mkdir -p "$(dirname "$out")"
cd "$root/proto"
"$buf" build --exclude-source-info -o "$out.tmp#format=txtpb"
{
    echo "# The contract of domino-engine $version as released: buf's image of proto/ (scripts/proto-baseline.sh)."
    echo "# \`buf breaking\` holds proto/ to it (tests/test_proto_contract.py). Generated: never edited by hand."
    cat "$out.tmp"
} >"$out"
rm "$out.tmp"
echo "proto-baseline: $out (domino-engine $version)"
