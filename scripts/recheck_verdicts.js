// Regenerate tests/rules/recheck_verdicts.json: the platform checker's own answers for a table
// of patterns, which tests/rules/test_settings.py holds blockkit's analysis (BK226, BK227) to.
//
//   npm install --prefix /tmp/recheck recheck@4.5.0
//   NODE_PATH=/tmp/recheck/node_modules node scripts/recheck_verdicts.js
//
// Runs recheck as the platform does (civitai/civitai@ebed661 settings-pattern-guard.ts): the
// pure JavaScript backend, no flags, a 5000 ms timeout; a pattern `new RegExp` refuses is
// "invalid". Run it with the Node version the platform uses (24): older ones refuse RegExp
// modifiers and duplicate group names, which Node 24 accepts.
'use strict';
process.env.RECHECK_BACKEND = 'pure';
process.env.RECHECK_SYNC_BACKEND = 'pure';
const fs = require('fs');
const path = require('path');
const { check } = require('recheck');

const file = path.join(__dirname, '..', 'tests', 'rules', 'recheck_verdicts.json');

(async () => {
  const table = JSON.parse(fs.readFileSync(file, 'utf8'));
  const rows = [];
  for (const [pattern] of table.verdicts) {
    let compiles = true;
    try {
      new RegExp(pattern);
    } catch (e) {
      compiles = false;
    }
    if (!compiles) {
      rows.push([pattern, 'invalid']);
      continue;
    }
    const result = await check(pattern, '', { timeout: 5000 });
    rows.push([pattern, result.status]);
  }
  table.verdicts = rows;
  table.generated_with = `recheck 4.5.0 (pure backend), node ${process.version}`;
  fs.writeFileSync(file, JSON.stringify(table, null, 1) + '\n');
})();
