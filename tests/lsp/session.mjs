// session.mjs — a scripted client driving a real `zgc lsp` process through
// a whole session, asserting the exact responses: initialize, open (with
// errors), incremental changes (the fix), definition, references, hover,
// document symbols, completion, formatting, the two custom requests,
// malformed input and unknown methods (the server goes on), shutdown,
// exit (status 0).
//
//   node tests/lsp/session.mjs ZGC
import { spawn, execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const zgc = process.argv[2];
if (!zgc) {
  console.error('usage: node session.mjs ZGC');
  process.exit(2);
}

const server = spawn(zgc, ['lsp'], { stdio: ['pipe', 'pipe', 'inherit'] });
let buf = Buffer.alloc(0);
const inbox = [];
let waiting = null;
server.stdout.on('data', (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  for (;;) {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const m = /Content-Length: (\d+)/i.exec(buf.subarray(0, end).toString());
    assert.ok(m, `a header block without Content-Length: ${buf.subarray(0, end)}`);
    const len = Number(m[1]);
    if (buf.length < end + 4 + len) return;
    inbox.push(JSON.parse(buf.subarray(end + 4, end + 4 + len).toString()));
    buf = buf.subarray(end + 4 + len);
    if (waiting) waiting();
  }
});
const exited = new Promise((resolve) => server.on('exit', (code) => resolve(code)));

function sendRaw(bytes) {
  server.stdin.write(bytes);
}
function send(msg) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...msg }));
  sendRaw(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
}
async function next() {
  const deadline = Date.now() + 10000;
  while (inbox.length === 0) {
    if (Date.now() > deadline) throw new Error('no message from the server within 10 s');
    await new Promise((r) => {
      waiting = r;
      setTimeout(r, 50);
    });
  }
  return inbox.shift();
}
let nextId = 1;
async function request(method, params) {
  const id = nextId++;
  send({ id, method, params });
  const m = await next();
  assert.equal(m.id, id, `the reply to ${method}: ${JSON.stringify(m)}`);
  return m;
}
const pos = (line, character) => ({ line, character });
const range = (l1, c1, l2, c2) => ({ start: pos(l1, c1), end: pos(l2, c2) });

const uri = 'file:///work/session.zg';
// line numbers below are 0-based, as LSP counts
const source = [
  'lifeline User, Writer;', //                                   0
  'var topic: str;', //                                          1
  'var draft: str;', //                                          2
  'llm write_reply(topic: str) -> (draft: str) {', //            3
  '    user = "{topic}"; parse = text;', //                      4
  '}', //                                                        5
  'guard ready = @Writer.draft != "";', //                       6
  'workflow hello(topic: str @ User) -> str {', //               7
  '    User(topic) -> Writer(topic);', //                        8
  '    Writer: draft = write_reply(topc);', //                   9  (typo)
  '    Writer(draft) -> User(draft);', //                        10
  '    return draft @ User;', //                                 11
  '}', //                                                        12
  '',
].join('\n');

try {
  // ---- before initialize: refused, the server goes on
  let m = await request('textDocument/hover', { textDocument: { uri }, position: pos(0, 0) });
  assert.deepEqual(m.error, { code: -32002, message: 'the server is not initialized' });

  m = await request('initialize', { processId: null, rootUri: null, capabilities: {} });
  assert.deepEqual(m.result, {
    capabilities: {
      textDocumentSync: { openClose: true, change: 2 },
      definitionProvider: true,
      referencesProvider: true,
      hoverProvider: true,
      documentSymbolProvider: true,
      documentFormattingProvider: true,
      completionProvider: {},
    },
    serverInfo: { name: 'zgc', version: m.result.serverInfo.version },
  });
  send({ method: 'initialized', params: {} });

  // ---- open: the compiler's diagnostic for the typo
  send({ method: 'textDocument/didOpen', params: { textDocument: { uri, languageId: 'zg', version: 1, text: source } } });
  m = await next();
  assert.deepEqual(m, {
    jsonrpc: '2.0',
    method: 'textDocument/publishDiagnostics',
    params: {
      uri,
      diagnostics: [
        {
          range: range(9, 32, 9, 36),
          severity: 1,
          source: 'zgc',
          message: 'unknown variable `topc`',
          relatedInformation: [{ location: { uri, range: range(1, 4, 1, 9) }, message: 'did you mean `topic`?' }],
        },
      ],
    },
  });

  // ---- an incremental change: a duplicate declaration, with its note as
  // related information
  send({
    method: 'textDocument/didChange',
    params: {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: range(2, 15, 2, 15), text: '\nvar draft: int;' }],
    },
  });
  m = await next();
  const dup = m.params.diagnostics.find((d) => d.message.startsWith('duplicate'));
  assert.deepEqual(dup, {
    range: range(3, 4, 3, 9),
    severity: 1,
    source: 'zgc',
    message: 'duplicate variable `draft`',
    relatedInformation: [
      { location: { uri, range: range(2, 4, 2, 9) }, message: 'previous declaration of `draft` here' },
    ],
  });
  // ... undone, and the typo fixed: one character each (line 9 again)
  send({
    method: 'textDocument/didChange',
    params: {
      textDocument: { uri, version: 3 },
      contentChanges: [
        { range: range(2, 15, 3, 15), text: '' },
        { range: range(9, 35, 9, 35), text: 'i' },
      ],
    },
  });
  m = await next();
  assert.deepEqual(m.params, { uri, diagnostics: [] });

  // ---- warnings too: an unused variable, then gone again
  send({
    method: 'textDocument/didChange',
    params: { textDocument: { uri, version: 4 }, contentChanges: [{ range: range(2, 15, 2, 15), text: '\nvar spare: int;' }] },
  });
  m = await next();
  assert.deepEqual(m.params.diagnostics, [
    { range: range(3, 4, 3, 9), severity: 2, source: 'zgc', message: 'variable `spare` is never used [-Wunused-variable]' },
  ]);
  send({
    method: 'textDocument/didChange',
    params: { textDocument: { uri, version: 5 }, contentChanges: [{ range: range(2, 15, 3, 15), text: '' }] },
  });
  m = await next();
  assert.deepEqual(m.params.diagnostics, []);

  // ---- definition: `draft` on line 10 -> its declaration
  m = await request('textDocument/definition', { textDocument: { uri }, position: pos(10, 12) });
  assert.deepEqual(m.result, { uri, range: range(2, 4, 2, 9) });
  // a lifeline
  m = await request('textDocument/definition', { textDocument: { uri }, position: pos(8, 22) });
  assert.deepEqual(m.result, { uri, range: range(0, 15, 0, 21) });
  // an action
  m = await request('textDocument/definition', { textDocument: { uri }, position: pos(9, 22) });
  assert.deepEqual(m.result, { uri, range: range(3, 4, 3, 15) });
  // nothing there
  m = await request('textDocument/definition', { textDocument: { uri }, position: pos(5, 0) });
  assert.equal(m.result, null);

  // ---- references of `draft`, with and without the declaration
  m = await request('textDocument/references', {
    textDocument: { uri },
    position: pos(2, 5),
    context: { includeDeclaration: true },
  });
  assert.deepEqual(m.result, [
    { uri, range: range(2, 4, 2, 9) },
    { uri, range: range(6, 22, 6, 27) },
    { uri, range: range(9, 12, 9, 17) },
    { uri, range: range(10, 11, 10, 16) },
    { uri, range: range(10, 26, 10, 31) },
    { uri, range: range(11, 11, 11, 16) },
  ]);
  m = await request('textDocument/references', {
    textDocument: { uri },
    position: pos(11, 12),
    context: { includeDeclaration: false },
  });
  assert.equal(m.result.length, 5);

  // ---- hover: a variable's type and owners, an action's signature
  m = await request('textDocument/hover', { textDocument: { uri }, position: pos(11, 12) });
  assert.deepEqual(m.result, {
    contents: { kind: 'markdown', value: '```zg\nvar draft: str\n```\n\nowners: Writer, User' },
    range: range(11, 11, 11, 16),
  });
  m = await request('textDocument/hover', { textDocument: { uri }, position: pos(9, 24) });
  assert.deepEqual(m.result.contents, {
    kind: 'markdown',
    value: '```zg\nllm write_reply(topic: str) -> (draft: str)\n```',
  });
  m = await request('textDocument/hover', { textDocument: { uri }, position: pos(6, 8) });
  assert.deepEqual(m.result.contents.value, '```zg\nguard ready = @Writer.draft != ""\n```');

  // ---- document symbols
  m = await request('textDocument/documentSymbol', { textDocument: { uri } });
  assert.deepEqual(
    m.result.map((s) => [s.name, s.kind]),
    [['User', 5], ['Writer', 5], ['topic', 13], ['draft', 13], ['write_reply', 12], ['ready', 17], ['hello', 6]],
  );
  assert.deepEqual(m.result[4].range, range(3, 0, 5, 1));
  assert.deepEqual(m.result[4].selectionRange, range(3, 4, 3, 15));

  // ---- completion: the names in scope
  m = await request('textDocument/completion', { textDocument: { uri }, position: pos(9, 20) });
  assert.equal(m.result.isIncomplete, false);
  assert.deepEqual(
    m.result.items.map((i) => i.label),
    ['User', 'Writer', 'topic', 'draft', 'write_reply', 'ready', 'hello'],
  );
  assert.deepEqual(m.result.items[4], {
    label: 'write_reply',
    kind: 3,
    detail: 'llm write_reply(topic: str) -> (draft: str)',
  });

  // ---- formatting: one edit, the formatter's text
  m = await request('textDocument/formatting', { textDocument: { uri }, options: { tabSize: 4, insertSpaces: true } });
  const dir = mkdtempSync(join(tmpdir(), 'zgc-lsp-'));
  const file = join(dir, 'session.zg');
  writeFileSync(file, source.replace('topc', 'topic'));
  const formatted = execFileSync(zgc, ['fmt', file]).toString();
  assert.deepEqual(m.result, [{ range: range(0, 0, 14, 0), newText: formatted }]);

  // ---- the custom requests: what `zgc project` and `zgc guards --plan` print
  m = await request('zgc/projection', { textDocument: { uri }, lifeline: 'Writer' });
  assert.deepEqual(m.result, {
    workflow: 'hello',
    text: execFileSync(zgc, ['project', '--lifeline', 'Writer', file]).toString(),
  });
  m = await request('zgc/monitorPlan', { textDocument: { uri } });
  assert.deepEqual(m.result, {
    workflow: 'hello',
    plan: execFileSync(zgc, ['guards', '--plan', file]).toString(),
    guards: execFileSync(zgc, ['guards', file]).toString(),
  });
  m = await request('zgc/projection', { textDocument: { uri }, lifeline: 'Nobody' });
  assert.deepEqual(m.error, { code: -32602, message: 'no lifeline `Nobody`' });
  rmSync(dir, { recursive: true });

  // ---- imports and fragments: a fragment's use leads to its declaration in
  // the imported file; an error in an imported file stands at the import
  const idir = realpathSync(mkdtempSync(join(tmpdir(), 'zgc-lsp-imports-')));
  writeFileSync(join(idir, 'lib.zg'), 'fragment greet(A: lifeline, B: lifeline, x: str) {\n    A(x) -> B(x);\n}\n');
  writeFileSync(join(idir, 'bad.zg'), 'lifeline A;\nconst K = nope;\n');
  const muri = `file://${idir}/main.zg`;
  const main = 'import "lib.zg";\nlifeline U, W;\nworkflow w(t: str @ U) {\n    greet(U, W, t);\n}\n';
  send({ method: 'textDocument/didOpen', params: { textDocument: { uri: muri, languageId: 'zg', version: 1, text: main } } });
  m = await next();
  assert.deepEqual(m.params, { uri: muri, diagnostics: [] });
  m = await request('textDocument/definition', { textDocument: { uri: muri }, position: pos(3, 6) });
  assert.deepEqual(m.result, { uri: `file://${idir}/lib.zg`, range: range(0, 9, 0, 14) });
  m = await request('textDocument/hover', { textDocument: { uri: muri }, position: pos(3, 6) });
  assert.deepEqual(m.result.contents.value, '```zg\nfragment greet(A: lifeline, B: lifeline, x: str)\n```');
  m = await request('textDocument/references', { textDocument: { uri: muri }, position: pos(3, 6), context: { includeDeclaration: false } });
  assert.deepEqual(m.result, [{ uri: muri, range: range(3, 4, 3, 9) }]);
  send({
    method: 'textDocument/didChange',
    params: {
      textDocument: { uri: muri, version: 2 },
      contentChanges: [{ text: 'import "bad.zg";\nlifeline U, W;\nworkflow w(t: str @ U) {\n}\n' }],
    },
  });
  m = await next();
  assert.deepEqual(m.params.diagnostics, [{
    range: range(0, 7, 0, 15),
    severity: 1,
    source: 'zgc',
    message: `${idir}/bad.zg:2:11: unknown variable \`nope\``,
    relatedInformation: [
      { location: { uri: `file://${idir}/bad.zg`, range: range(1, 10, 1, 14) }, message: 'unknown variable `nope`' },
      { location: { uri: muri, range: range(0, 7, 0, 15) }, message: `\`${idir}/bad.zg\` is imported here` },
    ],
  }]);
  send({ method: 'textDocument/didClose', params: { textDocument: { uri: muri } } });
  m = await next();
  rmSync(idir, { recursive: true });

  // ---- malformed input and unknown methods: errors, and the server goes on
  m = await request('textDocument/frobnicate', {});
  assert.deepEqual(m.error, { code: -32601, message: 'unknown method `textDocument/frobnicate`' });
  sendRaw('Content-Length: 9\r\n\r\n{"jsonrp:');
  m = await next();
  assert.equal(m.id, null);
  assert.equal(m.error.code, -32700);
  sendRaw('Content-Type: text/plain\r\n\r\n');
  m = await next();
  assert.deepEqual(m, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32700, message: 'a header block without Content-Length' },
  });
  send({ id: 'x', method: 'textDocument/hover', params: { textDocument: { uri } } });
  m = await next();
  assert.deepEqual(m, { jsonrpc: '2.0', id: 'x', error: { code: -32602, message: 'params.position is not a position' } });
  m = await request('textDocument/hover', { textDocument: { uri: 'file:///closed.zg' }, position: pos(0, 0) });
  assert.deepEqual(m.error, { code: -32602, message: 'the document is not open' });
  // still serving
  m = await request('textDocument/definition', { textDocument: { uri }, position: pos(10, 12) });
  assert.deepEqual(m.result, { uri, range: range(2, 4, 2, 9) });

  // ---- close, shutdown, exit
  send({ method: 'textDocument/didClose', params: { textDocument: { uri } } });
  m = await next();
  assert.deepEqual(m.params, { uri, diagnostics: [] });
  m = await request('shutdown', null);
  assert.deepEqual(m, { jsonrpc: '2.0', id: m.id, result: null });
  m = await request('textDocument/hover', { textDocument: { uri }, position: pos(0, 0) });
  assert.deepEqual(m.error, { code: -32600, message: 'the server is shut down' });
  send({ method: 'exit' });
  const code = await exited;
  assert.equal(code, 0, 'the exit status after shutdown and exit');
  console.log('lsp session: ok');
} catch (e) {
  server.kill();
  console.error(e);
  process.exit(1);
}
