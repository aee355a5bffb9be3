// screenshot.mjs — highlighted workflows as the editors show them:
// examples/hello.zg and the guards of examples/merge.zg tokenized by
// VS Code's TextMate engine with the extension's grammar, and highlighted
// by tree-sitter's own highlighter (`tree-sitter highlight --html`) with
// the tree-sitter grammar's queries, each written as HTML with the same
// light theme, shown in Debian's headless Chromium (puppeteer-core) and
// compared with docs/images/highlight.png and
// docs/images/highlight-tree-sitter.png (the pictures the documentation
// shows; --update writes them).  Also checks on each page that every
// keyword, comment, string, number and lifeline got its colour.
//
//   node tests/editors/screenshot.mjs ROOT NODE_MODULES TREE_SITTER PARSERS [--update]
//
// TREE_SITTER: the tree-sitter program; PARSERS: the directory holding the
// generated tree-sitter-zg (scripts/tree-sitter.sh: BUILD_DIR/editors).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, existsSync, mkdtempSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [root, modules, tsProgram, tsParsers] = process.argv.slice(2, 6).map((p) => resolve(p));
const UPDATE = process.argv.includes('--update');
const require = createRequire(join(modules, 'x.js'));
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');
const { default: puppeteer } = await import(pathToFileURL(join(modules, 'puppeteer-core/lib/esm/puppeteer/puppeteer-core.js')));
const { PNG } = (await import(pathToFileURL(join(modules, 'pngjs/lib/png.js')))).default;
const { default: pixelmatch } = await import(pathToFileURL(join(modules, 'pixelmatch/index.js')));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
// the share of pixels a screenshot may differ in (font rendering)
const TOLERANCE = 0.003;

await oniguruma.loadWASM(readFileSync(join(modules, 'vscode-oniguruma/release/onig.wasm')).buffer);
const gpath = join(root, 'editors/vscode/syntaxes/zg.tmLanguage.json');
const registry = new vsctm.Registry({
  onigLib: Promise.resolve({
    createOnigScanner: (p) => new oniguruma.OnigScanner(p),
    createOnigString: (s) => new oniguruma.OnigString(s),
  }),
  loadGrammar: async (scope) => (scope === 'source.zg' ? vsctm.parseRawGrammar(readFileSync(gpath, 'utf8'), gpath) : null),
});
const grammar = await registry.loadGrammar('source.zg');

// the theme: the first scope prefix that matches, innermost scope first
const THEME = [
  ['comment', 'comment', '#6a737d'],
  ['string', 'string', '#0a7d32'],
  ['constant.character.escape', 'escape', '#b35900'],
  ['variable.other.placeholder', 'placeholder', '#b35900'],
  ['constant.numeric', 'number', '#005cc5'],
  ['constant.language', 'constant', '#005cc5'],
  ['storage', 'keyword', '#a3158f'],
  ['keyword.control', 'keyword', '#a3158f'],
  ['keyword.operator.temporal', 'temporal', '#d12f1b'],
  ['keyword.operator', 'operator', '#555555'],
  ['entity.name.class', 'lifeline', '#8a4f00'],
  ['entity.name.function', 'function', '#3b45c4'],
  ['entity.name.type', 'type', '#3b45c4'],
  ['invalid', 'invalid', '#ff0000'],
];
function classOf(scopes) {
  for (const s of [...scopes].reverse())
    for (const [prefix, cls] of THEME) if (s === prefix || s.startsWith(prefix + '.')) return cls;
  return null;
}
const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
function highlight(text) {
  let stack = vsctm.INITIAL;
  return text.split('\n').map((line) => {
    const r = grammar.tokenizeLine(line, stack);
    stack = r.ruleStack;
    return r.tokens.map((t) => {
      const s = line.slice(t.startIndex, t.endIndex);
      const cls = classOf(t.scopes);
      return cls ? `<span class="${cls}">${esc(s)}</span>` : esc(s);
    }).join('');
  }).join('\n');
}

const hello = readFileSync(join(root, 'examples/hello.zg'), 'utf8').trimEnd();
const merge = readFileSync(join(root, 'examples/merge.zg'), 'utf8').split('\n');
const guards = merge.filter((l) => /^guard /.test(l) || /^ {4,}(&&|\|\|)/.test(l)).join('\n');
const css = THEME.map(([, cls, color]) => `.${cls}{color:${color}}`).join('') +
  '.keyword,.temporal{font-weight:bold}.comment{font-style:italic}';
const page = (title, a, b) => `<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:#fbfbf8;font:14px/1.45 "DejaVu Sans Mono",monospace;color:#24292e}
h1{font:600 13px "DejaVu Sans",sans-serif;color:#666;margin:0 0 6px}
pre{margin:0 0 14px;padding:10px 14px;background:#fff;border:1px solid #e1e4e8;border-radius:4px}
main{padding:14px 18px}${css}</style><main>
<h1>examples/hello.zg${title}</h1><pre id="hello">${a}</pre>
<h1>examples/merge.zg (its guards)${title}</h1><pre id="guards">${b}</pre></main>`;
const tmp = mkdtempSync(join(tmpdir(), 'zgc-highlight-'));

// tree-sitter's own highlighter, with a theme of the same colours, named
// for every capture of queries/highlights.scm: the highlighter matches a
// capture to the theme's name with the most parts in common, and two
// names with as many (`keyword` and `function` for `keyword.function`)
// would tie, and it would pick either from one run to the next
const TS_STYLE = {
  comment: { color: '#6a737d', italic: true }, string: '#0a7d32', number: '#005cc5',
  boolean: '#005cc5', constant: '#005cc5', keyword: { color: '#a3158f', bold: true },
  'keyword.operator': { color: '#d12f1b', bold: true }, operator: '#555555', type: '#8a4f00',
  'type.builtin': '#3b45c4', function: '#3b45c4',
};
const TS_THEME = {};
const captures = readFileSync(join(root, 'editors/tree-sitter-zg/queries/highlights.scm'), 'utf8')
  .replace(/;.*$/gm, '').matchAll(/@([a-z._]+)/g);
for (const [, name] of captures) {
  const style = TS_STYLE[name] ?? TS_STYLE[name.split('.')[0]];
  if (style) TS_THEME[name] = style;
}
function treeSitter(text, name) {
  const src = join(tmp, name);
  writeFileSync(src, text + '\n');
  const config = join(tmp, 'tree-sitter.json');
  writeFileSync(config, JSON.stringify({ 'parser-directories': [tsParsers], theme: TS_THEME }));
  const html = execFileSync(tsProgram, ['highlight', '--html', '--config-path', config, src], {
    encoding: 'utf8', env: { ...process.env, TREE_SITTER_LIBDIR: join(tsParsers, 'tree-sitter-zg/lib') },
  });
  // its lines, from its table: <td class=line>…</td>
  const lines = [...html.matchAll(/<td class=line>([\s\S]*?)<\/td>/g)].map((m) => m[1].replace(/\n$/, ''));
  assert.equal(lines.length, text.split('\n').length, `tree-sitter highlight gave ${lines.length} lines for ${name}`);
  return lines.join('\n');
}

const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--font-render-hinting=none', '--hide-scrollbars'],
  userDataDir: join(tmp, 'user'),
});

// shoot(NAME, HTML, SHOWN): the page in Chromium; SHOWN(tokens) checks what
// it shows ([class, text, colour, weight, style] of every span); the
// screenshot against docs/images/NAME.png
async function shoot(name, html, shown) {
  const file = join(tmp, `${name}.html`);
  writeFileSync(file, html);
  const page = await browser.newPage();
  await page.setViewport({ width: 900, height: 700 });
  await page.goto(pathToFileURL(file).href);
  const spans = await page.$$eval('span', (els) => els.map((e) => {
    const st = getComputedStyle(e);
    return [e.className, e.textContent, st.color, st.fontWeight, st.fontStyle];
  }));
  shown(spans);
  const colours = new Set(spans.map(([, , c]) => c));
  assert.ok(colours.size >= 7, `${name}: only ${colours.size} colours on the page`);
  const height = await page.$eval('main', (m) => Math.ceil(m.getBoundingClientRect().height));
  await page.setViewport({ width: 900, height });
  const buf = await page.screenshot({ type: 'png' });
  const ref = join(root, `docs/images/${name}.png`);
  if (UPDATE || !existsSync(ref)) {
    writeFileSync(ref, buf);
    if (!UPDATE) throw new Error(`${ref} did not exist: written now; check it and commit it`);
  } else {
    const a = PNG.sync.read(buf), b = PNG.sync.read(readFileSync(ref));
    assert.equal(`${a.width}x${a.height}`, `${b.width}x${b.height}`, `${name}: screenshot size`);
    const diff = new PNG({ width: a.width, height: a.height });
    const n = pixelmatch(a.data, b.data, diff.data, a.width, a.height, { threshold: 0.1 });
    const share = n / (a.width * a.height);
    if (share > TOLERANCE) {
      writeFileSync(join(tmp, `${name}.png`), buf);
      writeFileSync(join(tmp, `${name}.diff.png`), PNG.sync.write(diff));
      throw new Error(`the screenshot differs from docs/images/${name}.png in ${(share * 100).toFixed(2)}% of its pixels (${tmp})`);
    }
  }
  console.log(`screenshot: ${name} ok (${spans.length} highlighted tokens, ${colours.size} colours, 900x${height})`);
}

try {
  await shoot('highlight', page('', highlight(hello), highlight(guards)), (spans) => {
    const has = (cls, text) => spans.some(([c, t]) => c === cls && t === text);
    for (const [cls, text] of [
      ['keyword', 'lifeline'], ['keyword', 'llm'], ['keyword', 'workflow'], ['keyword', 'return'], ['keyword', 'guard'],
      ['comment', '// hello.zg — a topic goes to a writer, a draft comes back'], ['placeholder', '{topic}'],
      ['lifeline', 'Writer'], ['function', 'write_reply'], ['temporal', 'since'], ['lifeline', 'Security'],
    ])
      assert.ok(has(cls, text), `\`${text}\` is not shown as ${cls}`);
  });
  // the same workflows as tree-sitter highlights them
  const ts = page(' — tree-sitter', treeSitter(hello, 'hello.zg'), treeSitter(guards, 'guards.zg'));
  await shoot('highlight-tree-sitter', ts, (spans) => {
    const rgb = (h) => `rgb(${[1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)).join(', ')})`;
    const has = (text, colour, bold, italic) => spans.some(([, t, c, w, st]) =>
      t === text && c === rgb(colour) && (!bold || Number(w) >= 700) && (!italic || st === 'italic'));
    for (const [text, colour, bold, italic] of [
      ['lifeline', '#a3158f', true], ['llm', '#a3158f', true], ['workflow', '#a3158f', true],
      ['return', '#a3158f', true], ['guard', '#a3158f', true],
      ['// hello.zg — a topic goes to a writer, a draft comes back', '#6a737d', false, true],
      ['"Write a concise reply."', '#0a7d32'], ['Writer', '#8a4f00'], ['Security', '#8a4f00'],
      ['write_reply', '#3b45c4'], ['since', '#d12f1b', true], ['str', '#3b45c4'],
    ])
      assert.ok(has(text, colour, bold, italic), `tree-sitter: \`${text}\` is not shown in ${colour}${bold ? ', bold' : ''}${italic ? ', italic' : ''}`);
  });
} finally {
  await browser.close();
}
