// perf.mjs — diagnostics of a 10,000-statement workflow after a
// one-character change: the time from sending the change to receiving
// its publishDiagnostics, over a real `zgc lsp` process.  Prints every
// measurement; fails when the median is over the bound (200 ms), or, with
// --no-timing (sanitized builds, 10 to 20 times slower), only checks the
// answers.
//
//   node tests/lsp/perf.mjs ZGC [--no-timing] [--statements N]
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';

const args = process.argv.slice(2);
const zgc = args[0];
const timing = !args.includes('--no-timing');
const si = args.indexOf('--statements');
const N = si >= 0 ? Number(args[si + 1]) : 10000;
const BOUND_MS = 200;
const ROUNDS = 7;

// A workflow of N statements: assignments, messages, ifs and loops over
// four lifelines (each if or while counts its body's statements too).
const lines = ['lifeline A, B, C, D;'];
for (let i = 0; i < 8; i++) lines.push(`var x${i}: int = ${i};`);
lines.push('pure inc(v: int) -> int = v % 1000 + 1;');
lines.push('workflow big() {');
const L = ['A', 'B', 'C', 'D'];
let n = 0;
while (n < N) {
  const a = L[n % 4], b = L[(n + 1) % 4], v = `x${n % 8}`;
  switch (n % 5) {
    case 0: lines.push(`    ${a}: ${v} = inc(${v});`); n += 1; break;
    case 1: lines.push(`    ${a}(${v}) -> ${b}(${v});`); n += 1; break;
    case 2: lines.push(`    if ${v} > 3 @ ${a} {`, `        ${a}: ${v} = ${v} + 1;`, `    } else {`, `        skip ${a};`, '    }'); n += 3; break;
    case 3: lines.push(`    ${a}: ${v} = ${v} * 2 + 1;`); n += 1; break;
    default: lines.push(`    ${a}(${v}) -> ${b}(${v});`); n += 1; break;
  }
}
lines.push('}', '');
const text = lines.join('\n');
const mid = Math.floor(lines.length / 2);
// a line `    X: xK = inc(xK);` or similar in the middle: its first digit
let line = mid;
while (!/x\d/.test(lines[line])) line++;
const col = lines[line].search(/x\d/) + 1;

const server = spawn(zgc, ['lsp'], { stdio: ['pipe', 'pipe', 'inherit'] });
let buf = Buffer.alloc(0);
const inbox = [];
let wake = null;
server.stdout.on('data', (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  for (;;) {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const len = Number(/Content-Length: (\d+)/i.exec(buf.subarray(0, end).toString())[1]);
    if (buf.length < end + 4 + len) return;
    inbox.push({ at: performance.now(), msg: JSON.parse(buf.subarray(end + 4, end + 4 + len).toString()) });
    buf = buf.subarray(end + 4 + len);
    if (wake) wake();
  }
});
function send(msg) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...msg }));
  server.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
}
async function next() {
  const deadline = Date.now() + 120000;
  while (!inbox.length) {
    if (Date.now() > deadline) throw new Error('no answer within 120 s');
    await new Promise((r) => { wake = r; setTimeout(r, 20); });
  }
  return inbox.shift();
}

const uri = 'file:///perf/big.zg';
try {
  send({ id: 1, method: 'initialize', params: { capabilities: {} } });
  await next();
  send({ method: 'initialized', params: {} });
  send({ method: 'textDocument/didOpen', params: { textDocument: { uri, languageId: 'zg', version: 1, text } } });
  let m = await next();
  assert.deepEqual(m.msg.params.diagnostics, [], 'the generated workflow has errors');
  const times = [];
  for (let r = 0; r < ROUNDS; r++) {
    // one character: `xK` becomes `yK` (an unknown name: an error), then back
    const broken = r % 2 === 0;
    const t0 = performance.now();
    send({
      method: 'textDocument/didChange',
      params: {
        textDocument: { uri, version: r + 2 },
        contentChanges: [{ range: { start: { line, character: col - 1 }, end: { line, character: col } }, text: broken ? 'y' : 'x' }],
      },
    });
    m = await next();
    times.push(m.at - t0);
    assert.equal(m.msg.method, 'textDocument/publishDiagnostics');
    assert.equal(m.msg.params.diagnostics.length, broken ? 1 : 0, JSON.stringify(m.msg.params.diagnostics));
    if (broken) assert.equal(m.msg.params.diagnostics[0].range.start.line, line);
  }
  send({ id: 2, method: 'shutdown' });
  await next();
  send({ method: 'exit' });
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  console.log(`lsp perf: ${N} statements (${lines.length} lines, ${text.length} bytes): diagnostics after a one-character change in ${times.map((t) => t.toFixed(1)).join(', ')} ms; median ${median.toFixed(1)} ms (bound ${BOUND_MS} ms${timing ? '' : ', not timed'})`);
  if (timing && median > BOUND_MS) {
    console.error(`lsp perf: the median ${median.toFixed(1)} ms is over ${BOUND_MS} ms`);
    process.exit(1);
  }
} catch (e) {
  server.kill();
  console.error(e);
  process.exit(1);
}
