// signoff's wrapper for vitest and jest: starts the test runner, and when it has ended, stops every
// process it left behind, then records how it ended and the SHA-256 of its JUnit report.
// It never loads the code under test. argv: REPORT RECORD -- COMMAND...
import { spawn } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

const [report, record, sep, ...command] = process.argv.slice(2);
const key = process.env.SIGNOFF_GUARD_KEY || '';
const env = { ...process.env };
delete env.SIGNOFF_GUARD_KEY;
delete process.env.SIGNOFF_GUARD_KEY;

function ancestors() {
  const keep = new Set([process.pid]);
  let pid = process.pid;
  while (pid > 1) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      keep.add(pid);
    } catch {
      break;
    }
  }
  return keep;
}

// A process the code under test started (a detached writer, a worker that outlived the runner)
// must not touch the report after it is digested: everything but this wrapper's own line dies.
function stopOthers() {
  const keep = ancestors();
  for (let round = 0; round < 5; round++) {
    let found = 0;
    for (const name of readdirSync('/proc')) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid <= 1 || keep.has(pid)) continue;
      try {
        process.kill(pid, 'SIGKILL');
        found++;
      } catch {}
    }
    if (!found) return;
  }
}

function finish(code, signal) {
  stopOthers();
  let sha = null;
  try {
    sha = createHash('sha256').update(readFileSync(report)).digest('hex');
  } catch {}
  const body = JSON.stringify({ v: 1, exit_code: code, signal, report_sha256: sha });
  const mac = createHmac('sha256', key).update(body).digest('hex');
  writeFileSync(record, JSON.stringify({ body, mac }));
  process.exit(signal ? 1 : code ?? 1);
}

if (sep !== '--' || !command.length) {
  process.stderr.write('usage: run_tests.mjs REPORT RECORD -- COMMAND...\n');
  process.exit(2);
}
const child = spawn(command[0], command.slice(1), { stdio: 'inherit', env });
child.on('error', () => finish(127, null));
child.on('exit', (code, signal) => finish(code, signal));
