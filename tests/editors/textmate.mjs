// textmate.mjs — the VS Code extension's TextMate grammar
// (editors/vscode/syntaxes/zg.tmLanguage.json) in VS Code's own engine
// (vscode-textmate with Oniguruma): it is valid JSON and loads; every
// keyword of the lexer (read from grammar/lexer.l, so that a new keyword
// without highlighting fails here) gets a keyword scope; every workflow of
// the repository tokenizes with no `invalid` scope; comments and strings
// are scoped as such.  Also checks the extension's package.json.
//
//   node tests/editors/textmate.mjs ROOT NODE_MODULES
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';

const [root, modules] = process.argv.slice(2).map((p) => resolve(p));
const require = createRequire(join(modules, 'x.js'));
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

// ---- the lexer's keywords
export function lexerKeywords(rootDir) {
  const lexer = readFileSync(join(rootDir, 'grammar/lexer.l'), 'utf8');
  const words = new Set();
  for (const line of lexer.split('\n')) {
    // `"while"   { return tok(...) }` and `"store"|"cell"|... {`
    const m = /^((?:"[a-z_]+"\|?)+)\s+\{/.exec(line);
    if (!m) continue;
    for (const w of m[1].matchAll(/"([a-z_]+)"/g)) words.add(w[1]);
  }
  return [...words];
}
const keywords = lexerKeywords(root);
assert.ok(keywords.length >= 30, `only ${keywords.length} keywords found in grammar/lexer.l`);

// ---- the extension's manifest
const ext = join(root, 'editors/vscode');
const manifest = JSON.parse(readFileSync(join(ext, 'package.json'), 'utf8'));
const lang = manifest.contributes.languages[0];
assert.deepEqual(lang.extensions, ['.zg']);
assert.ok(existsSync(join(ext, lang.configuration)), 'language-configuration.json is missing');
JSON.parse(readFileSync(join(ext, lang.configuration), 'utf8'));
const gpath = join(ext, manifest.contributes.grammars[0].path);
const grammarText = readFileSync(gpath, 'utf8');
const grammarJson = JSON.parse(grammarText);
assert.equal(grammarJson.scopeName, manifest.contributes.grammars[0].scopeName);
assert.ok(existsSync(join(ext, manifest.main)), `${manifest.main} is missing`);

// ---- the engine
const wasm = readFileSync(join(modules, 'vscode-oniguruma/release/onig.wasm')).buffer;
await oniguruma.loadWASM(wasm);
const registry = new vsctm.Registry({
  onigLib: Promise.resolve({
    createOnigScanner: (p) => new oniguruma.OnigScanner(p),
    createOnigString: (s) => new oniguruma.OnigString(s),
  }),
  loadGrammar: async (scope) => (scope === 'source.zg' ? vsctm.parseRawGrammar(grammarText, gpath) : null),
});
const grammar = await registry.loadGrammar('source.zg');
assert.ok(grammar, 'the grammar does not load');

function tokenize(text) {
  let stack = vsctm.INITIAL;
  const out = [];
  text.split('\n').forEach((line, i) => {
    const r = grammar.tokenizeLine(line, stack);
    for (const t of r.tokens) out.push({ line: i + 1, text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes });
    stack = r.ruleStack;
  });
  return out;
}

// every keyword, alone and in a line of code, has a scope of its own
const missing = [];
for (const kw of keywords) {
  for (const line of [kw, `x ${kw} y`]) {
    const t = tokenize(line).find((x) => x.text === kw);
    const scoped = t && t.scopes.some((s) => /^(keyword|storage|constant\.language)\./.test(s));
    if (!scoped) missing.push(`${kw} (in "${line}": ${t ? t.scopes.join(' ') : 'not a token'})`);
  }
}
assert.deepEqual(missing, [], `keywords of grammar/lexer.l without highlighting:\n  ${missing.join('\n  ')}`);

// comments, strings and what is in them
const sample = tokenize('// c\nx /* b */ = "a {topic} \\n" + """t\n  u""";\nA: y = f(1.5e3);');
const scopeOf = (text) => sample.find((t) => t.text.includes(text)).scopes.at(-1);
assert.equal(scopeOf('// c'), 'comment.line.double-slash.zg');
assert.equal(scopeOf(' b '), 'comment.block.zg');
assert.equal(scopeOf('{topic}'), 'variable.other.placeholder.zg');
assert.equal(scopeOf('\\n'), 'constant.character.escape.zg');
assert.equal(scopeOf('u'), 'string.quoted.triple.zg');
assert.equal(scopeOf('1.5e3'), 'constant.numeric.float.zg');
assert.equal(scopeOf('A'), 'entity.name.class.lifeline.zg');

// every workflow of the repository: nothing invalid
function* zgFiles(dir) {
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.') || name.startsWith('build') || name === 'node_modules') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* zgFiles(p);
    else if (name.endsWith('.zg') && !p.includes('/tests/fail/') && !p.includes('/tests/fuzz/')) yield p;
  }
}
let files = 0;
const bad = [];
for (const f of zgFiles(root)) {
  files++;
  for (const t of tokenize(readFileSync(f, 'utf8')))
    if (t.scopes.some((s) => s.startsWith('invalid'))) bad.push(`${f}:${t.line}: \`${t.text}\` ${t.scopes.at(-1)}`);
}
assert.ok(files > 50, `only ${files} workflows found`);
assert.deepEqual(bad, [], `invalid tokens:\n  ${bad.join('\n  ')}`);
console.log(`textmate: ok (${keywords.length} keywords of the lexer highlighted, ${files} workflows tokenized)`);
