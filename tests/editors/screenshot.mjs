// screenshot.mjs — highlighted workflows as the VS Code extension shows
// them: examples/hello.zg and the guards of examples/merge.zg tokenized by
// VS Code's TextMate engine with the extension's grammar, written as HTML
// with a light theme, shown in Debian's headless Chromium (puppeteer-core)
// and compared with docs/images/highlight.png (the picture the
// documentation shows; --update writes it).  Also checks on the page that
// every keyword, comment, string, number and lifeline got its colour.
//
//   node tests/editors/screenshot.mjs ROOT NODE_MODULES [--update]
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [root, modules] = process.argv.slice(2, 4).map((p) => resolve(p));
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
const html = `<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:#fbfbf8;font:14px/1.45 "DejaVu Sans Mono",monospace;color:#24292e}
h1{font:600 13px "DejaVu Sans",sans-serif;color:#666;margin:0 0 6px}
pre{margin:0 0 14px;padding:10px 14px;background:#fff;border:1px solid #e1e4e8;border-radius:4px}
main{padding:14px 18px}${css}</style><main>
<h1>examples/hello.zg</h1><pre id="hello">${highlight(hello)}</pre>
<h1>examples/merge.zg (its guards)</h1><pre id="guards">${highlight(guards)}</pre></main>`;
const tmp = mkdtempSync(join(tmpdir(), 'zgc-highlight-'));
const page_html = join(tmp, 'highlight.html');
writeFileSync(page_html, html);

const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--font-render-hinting=none', '--hide-scrollbars'],
  userDataDir: join(tmp, 'user'),
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 900, height: 700 });
  await page.goto(pathToFileURL(page_html).href);
  // what the page shows: every kind of token in its colour
  const shown = await page.$$eval('span', (els) => els.map((e) => [e.className, e.textContent, getComputedStyle(e).color]));
  const has = (cls, text) => shown.some(([c, t]) => c === cls && t === text);
  for (const [cls, text] of [
    ['keyword', 'lifeline'], ['keyword', 'llm'], ['keyword', 'workflow'], ['keyword', 'return'], ['keyword', 'guard'],
    ['comment', '// hello.zg — a topic goes to a writer, a draft comes back'], ['placeholder', '{topic}'],
    ['lifeline', 'Writer'], ['function', 'write_reply'], ['temporal', 'since'], ['lifeline', 'Security'],
  ])
    assert.ok(has(cls, text), `\`${text}\` is not shown as ${cls}`);
  const colours = new Set(shown.map(([, , c]) => c));
  assert.ok(colours.size >= 7, `only ${colours.size} colours on the page`);
  const height = await page.$eval('main', (m) => Math.ceil(m.getBoundingClientRect().height));
  await page.setViewport({ width: 900, height });
  const buf = await page.screenshot({ type: 'png' });
  const ref = join(root, 'docs/images/highlight.png');
  if (UPDATE || !existsSync(ref)) {
    writeFileSync(ref, buf);
    if (!UPDATE) throw new Error(`${ref} did not exist: written now; check it and commit it`);
  } else {
    const a = PNG.sync.read(buf), b = PNG.sync.read(readFileSync(ref));
    assert.equal(`${a.width}x${a.height}`, `${b.width}x${b.height}`, 'screenshot size');
    const diff = new PNG({ width: a.width, height: a.height });
    const n = pixelmatch(a.data, b.data, diff.data, a.width, a.height, { threshold: 0.1 });
    const share = n / (a.width * a.height);
    if (share > TOLERANCE) {
      writeFileSync(join(tmp, 'highlight.png'), buf);
      writeFileSync(join(tmp, 'highlight.diff.png'), PNG.sync.write(diff));
      throw new Error(`the screenshot differs from docs/images/highlight.png in ${(share * 100).toFixed(2)}% of its pixels (${tmp})`);
    }
  }
  console.log(`screenshot: ok (${shown.length} highlighted tokens, ${colours.size} colours, 900x${height})`);
} finally {
  await browser.close();
}
