'use strict';
// signoff guard for node --test: runs first in the runner and in every test file's process (--require).
if (!process.env.NODE_TEST_CONTEXT) {
  // The runner process never loads the code under test: at its end it records the SHA-256 of the
  // report it wrote, so a report replaced by a test file's process is caught.
  const fs = require('node:fs');
  const crypto = require('node:crypto');
  const path = require('node:path');
  const key = process.env.SIGNOFF_GUARD_KEY || '';
  const files = (process.env.SIGNOFF_GUARD_FILES || '').split(':');
  const flag = '--test-reporter-destination=';
  const dest = ([...process.execArgv, ...process.argv].find((a) => a.startsWith(flag)) || '').slice(flag.length);
  const last = process.argv[process.argv.length - 1] || '';
  const index = files.indexOf(path.resolve(last));
  process.on('exit', () => {
    if (index < 0 || !dest) return;
    let sha = null;
    try { sha = crypto.createHash('sha256').update(fs.readFileSync(dest)).digest('hex'); } catch (e) { sha = null; }
    const body = JSON.stringify({ v: 1, runner: true, report_sha256: sha, exitCode: process.exitCode ?? 0 });
    const mac = crypto.createHmac('sha256', key).update(body).digest('hex');
    fs.writeFileSync(`/work/signoff-guard-${index}-runner.json`, JSON.stringify({ body, mac }));
  });
} else {
  const fs = require('node:fs');
  const crypto = require('node:crypto');
  const path = require('node:path');
  const key = process.env.SIGNOFF_GUARD_KEY || '';
  delete process.env.SIGNOFF_GUARD_KEY;
  const files = (process.env.SIGNOFF_GUARD_FILES || '').split(':');
  const index = files.indexOf(path.resolve(process.argv[1] || ''));
  const out = `/work/signoff-guard-${index}.json`;
  const writeFileSync = fs.writeFileSync;
  const createHmac = crypto.createHmac;
  const stringify = JSON.stringify;
  const Module = require('node:module');
  // What decides a test's outcome. Not fs or process.emit: common packages (graceful-fs,
  // signal-exit) patch those for good reasons; the guard holds what it needs from them itself.
  const watched = {
    'node:assert': [require('node:assert')], 'node:assert/strict': [require('node:assert/strict')],
    'node:test': [require('node:test')], 'node:module': [Module], 'Module.prototype': [Module.prototype],
    'Module._extensions': [Module._extensions], 'Function.prototype': [Function.prototype, ['call', 'apply', 'bind']],
    process: [process, ['exit', 'kill', 'abort']],
  };
  const snapshot = [];
  for (const [label, [obj, only]] of Object.entries(watched)) {
    for (const name of only || Reflect.ownKeys(obj)) {
      const d = Object.getOwnPropertyDescriptor(obj, name);
      if (d && 'value' in d && typeof d.value === 'function') snapshot.push([label, obj, name, d.value]);
    }
  }
  const findings = [];
  const note = (t) => { if (!findings.includes(t) && findings.length < 50) findings.push(t); };
  const check = () => {
    for (const [label, obj, name, value] of snapshot) {
      if (obj[name] !== value) note(`replaced: ${label}.${String(name)}`);
    }
  };
  let written = false;
  const record = (how) => {
    if (written) return;
    written = true;
    check();
    const body = stringify({ v: 1, file: process.argv[1], how, exitCode: process.exitCode ?? 0, findings });
    const mac = createHmac('sha256', key).update(body).digest('hex');
    writeFileSync(out, stringify({ body, mac }));
  };
  // The assertion and test functions become accessors that note every assignment the moment it
  // happens, so even a one-shot patch that puts itself back is seen; redefining them throws.
  for (const label of ['node:assert', 'node:assert/strict', 'node:test']) {
    const obj = watched[label][0];
    for (const name of Reflect.ownKeys(obj)) {
      const d = Object.getOwnPropertyDescriptor(obj, name);
      if (!d || !('value' in d) || typeof d.value !== 'function' || !d.configurable) continue;
      let current = d.value;
      Object.defineProperty(obj, name, {
        configurable: false, enumerable: d.enumerable,
        get() { return current; },
        set(v) { note(`assigned: ${label}.${String(name)}`); current = v; },
      });
    }
  }
  // Right before and after every test too: a patch that puts itself back is still seen.
  watched['node:test'][0].beforeEach(() => check());
  watched['node:test'][0].afterEach(() => check());
  // The test runner calls process.exit itself once the file's tests are done; a file that calls it
  // earlier is caught by the canaries and by the missing tests, and a reallyExit leaves no record.
  process.on('exit', () => record('exit'));
}
