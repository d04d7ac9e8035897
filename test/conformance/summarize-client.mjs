// Counts the scenarios of the client conformance runs made by
// run-client.sh, from the suite's own per-scenario verdicts (its
// "=== SUITE SUMMARY ===": ✓ or ✗ per scenario, a ✗ being a FAILURE or
// WARNING check, a client that timed out, or one that exited non-zero
// where the scenario does not allow it) and its "Not scored" list.
//
//   node summarize-client.mjs RESULTS_DIR NAME...
//
// RESULTS_DIR/NAME.log is the standard output and error of the run NAME
// (a requirement set). There is no baseline: a scored scenario that fails
// is a failure. The scenarios the set runs without scoring (the
// authorization extensions, those added after the release) are counted on
// a line of their own, and are required too: one that fails fails the run
// (the suite itself would not).
//
// Prints a report and, last, the line
//   conformance client: N passed, N failed (scored)
// and exits 1 when a scenario failed (or a run printed no summary).

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const [resultsDir, ...runs] = process.argv.slice(2);
if (!resultsDir || runs.length === 0) {
  console.error('usage: node summarize-client.mjs RESULTS_DIR NAME...');
  process.exit(2);
}

const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, '');
const total = { passed: 0, failed: 0 };
const unscored = { passed: 0, failed: 0 };
const problems = [];

for (const name of runs) {
  const logFile = path.join(resultsDir, `${name}.log`);
  const lines = existsSync(logFile) ? strip(readFileSync(logFile, 'utf8')).split(/\r?\n/) : [];
  const start = lines.findIndex((l) => l.trim() === '=== SUITE SUMMARY ===');
  if (start < 0) {
    problems.push(`${name}: the suite printed no summary (see ${name}.log)`);
    total.failed++;
    continue;
  }
  const verdicts = new Map();
  const notScored = new Map(); // scenario -> why
  let inNotScored = false;
  for (const l of lines.slice(start + 1)) {
    const t = l.trim();
    let m = /^([✓✗]) (\S+): \d+ passed, \d+ failed/.exec(t);
    if (m && !inNotScored) verdicts.set(m[2], m[1] === '✓');
    if (/^Not scored for /.test(t)) inNotScored = true;
    m = /^[✓✗] (\S+) \(([^)]+)\)$/.exec(t);
    if (inNotScored && m) notScored.set(m[1], m[2]);
  }
  const run = { passed: 0, failed: 0 };
  const runUnscored = { passed: 0, failed: 0 };
  const failedUnscored = [];
  for (const [scenario, ok] of verdicts) {
    if (notScored.has(scenario)) {
      ok ? runUnscored.passed++ : runUnscored.failed++;
      if (!ok) {
        failedUnscored.push(`${scenario} (${notScored.get(scenario)})`);
        problems.push(`${name} ${scenario} (not scored: ${notScored.get(scenario)}): fails (see ${name}.log and ${name}/)`);
      }
    } else if (ok) run.passed++;
    else {
      run.failed++;
      problems.push(`${name} ${scenario}: fails (see ${name}.log and ${name}/)`);
    }
  }
  console.log(
    `run ${name}: scored ${run.passed} passed, ${run.failed} failed; ` +
      `not scored ${runUnscored.passed} passed, ${runUnscored.failed} failed` +
      (failedUnscored.length > 0 ? `: ${failedUnscored.join(', ')}` : ''),
  );
  total.passed += run.passed;
  total.failed += run.failed;
  unscored.passed += runUnscored.passed;
  unscored.failed += runUnscored.failed;
}

if (problems.length > 0) {
  console.log('\nScenarios that fail:');
  for (const p of problems) console.log(`  ✗ ${p}`);
}
console.log(`conformance client, not scored (extension, added after release): ${unscored.passed} passed, ${unscored.failed} failed`);
console.log(`conformance client: ${total.passed} passed, ${total.failed} failed (scored)`);
process.exit(total.failed > 0 || unscored.failed > 0 ? 1 : 0);
