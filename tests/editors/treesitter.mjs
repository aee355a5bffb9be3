// treesitter.mjs — the tree-sitter grammar (editors/tree-sitter-zg) read a
// second way, beside tree-sitter's own (scripts/tree-sitter.sh, in the same
// test): this reads grammar.js with its own implementation of the
// grammar DSL, parses with an Earley parser that lexes as tree-sitter does
// (the longest token the parse can take at each point, keywords reserved
// from the `word` token, extras between tokens), and checks
//   - every .zg file of the repository (but tests/fail and the fuzz seeds)
//     parses whole, with one tree;
//   - every test of test/corpus gives its expected tree (tree-sitter's
//     corpus format: `===` name `===`, source, `---`, S-expression);
//   - queries/highlights.scm names only node types and fields the grammar
//     has, and every keyword of the lexer (grammar/lexer.l) is highlighted.
// What it cannot check: that tree-sitter's LR(1) generator accepts the
// grammar without conflicts; `tree-sitter generate` does that.
//
//   node tests/editors/treesitter.mjs ROOT [--print FILE]
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';

const args = process.argv.slice(2);
const root = resolve(args[0]);
const dir = join(root, 'editors/tree-sitter-zg');

// ---- the DSL -----------------------------------------------------------------
const S = (name) => ({ type: 'SYMBOL', name });
const norm = (x) => (typeof x === 'string' ? { type: 'STRING', value: x } : x instanceof RegExp ? { type: 'PATTERN', value: x.source } : x);
const dsl = {
  grammar: (g) => g,
  seq: (...m) => ({ type: 'SEQ', members: m.map(norm) }),
  choice: (...m) => ({ type: 'CHOICE', members: m.map(norm) }),
  repeat: (x) => ({ type: 'REPEAT', content: norm(x) }),
  repeat1: (x) => ({ type: 'REPEAT1', content: norm(x) }),
  optional: (x) => ({ type: 'CHOICE', members: [norm(x), { type: 'BLANK' }] }),
  field: (name, x) => ({ type: 'FIELD', name, content: norm(x) }),
  alias: (x, to) => ({ type: 'ALIAS', content: norm(x), value: to.name ?? to, named: typeof to !== 'string' }),
  blank: () => ({ type: 'BLANK' }),
};
dsl.token = (x) => ({ type: 'TOKEN', content: norm(x) });
dsl.token.immediate = dsl.token;
dsl.prec = (p, x) => norm(x);
dsl.prec.left = (p, x) => norm(x === undefined ? p : x);
dsl.prec.right = dsl.prec.left;
dsl.prec.dynamic = dsl.prec;
Object.assign(globalThis, dsl);
const require = createRequire(join(dir, 'grammar.js'));
const G = require(join(dir, 'grammar.js'));
const $ = new Proxy({}, { get: (_, name) => S(name) });
const rules = {};
for (const [name, fn] of Object.entries(G.rules)) rules[name] = norm(fn($));
const ruleNames = Object.keys(rules);
const start = ruleNames[0];

// ---- terminals -------------------------------------------------------------------
// A rule made only of strings, patterns and tokens is a token of its own.
function isLexical(e) {
  switch (e.type) {
    case 'STRING': case 'PATTERN': case 'TOKEN': return true;
    case 'SEQ': case 'CHOICE': return e.members.every((m) => m.type === 'BLANK' || isLexical(m));
    default: return false;
  }
}
function regexOf(e) {
  switch (e.type) {
    case 'STRING': return e.value.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    case 'PATTERN': return `(?:${e.value})`;
    case 'TOKEN': return regexOf(e.content);
    case 'SEQ': return e.members.map(regexOf).join('');
    case 'CHOICE': return `(?:${e.members.map((m) => (m.type === 'BLANK' ? '' : regexOf(m))).join('|')})`;
    case 'REPEAT': return `(?:${regexOf(e.content)})*`;
    case 'REPEAT1': return `(?:${regexOf(e.content)})+`;
    default: throw new Error(`not a token: ${e.type}`);
  }
}
const wordRule = G.word ? G.word($).name : null;
const wordSrc = wordRule ? regexOf(rules[wordRule]) : null;
const wordRe = wordRule ? new RegExp(`^(?:${wordSrc})$`) : null;
const terminals = new Map(); // key -> {key, re, named, name, literal, word}
function terminal(key, src, named, name, literal) {
  if (!terminals.has(key)) terminals.set(key, { key, re: new RegExp(src, 'y'), named, name, literal, word: src === wordSrc });
  return key;
}
const lexicalRules = new Set(ruleNames.filter((n) => isLexical(rules[n])));
for (const n of lexicalRules) terminal(`rule:${n}`, regexOf(rules[n]), true, n);

// every string of the grammar that the word token would match is a
// keyword: reserved from it
const keywords = new Set();
(function strings(e) {
  if (!e || typeof e !== 'object') return;
  if (e.type === 'STRING' && wordRe && wordRe.test(e.value)) keywords.add(e.value);
  for (const v of Object.values(e)) if (Array.isArray(v)) v.forEach(strings); else if (v && typeof v === 'object') strings(v);
})(rules);

// ---- productions ----------------------------------------------------------------------
// symbol: {t: terminal key} or {n: nonterminal}; with field and alias.
const prods = new Map(); // nonterminal -> [[symbol...]]
const visible = new Map(); // nonterminal -> node name (undefined: hidden)
let fresh = 0;
function addNT(name, shown) {
  prods.set(name, []);
  if (shown) visible.set(name, shown);
  return name;
}
// The alternatives of e: each a list of symbols.
function alts(e, fieldName) {
  switch (e.type) {
    case 'BLANK': return [[]];
    case 'STRING': {
      return [[{ t: terminal(`str:${e.value}`, regexOf(e), false, e.value, e.value), field: fieldName }]];
    }
    case 'PATTERN': case 'TOKEN':
      return [[{ t: terminal(`re:${regexOf(e)}`, regexOf(e), false, '', undefined), field: fieldName }]];
    case 'SYMBOL':
      if (lexicalRules.has(e.name)) return [[{ t: `rule:${e.name}`, field: fieldName }]];
      return [[{ n: e.name, field: fieldName }]];
    case 'FIELD': return alts(e.content, e.name);
    case 'ALIAS': {
      const c = e.content;
      if (isLexical(c) || (c.type === 'SYMBOL' && lexicalRules.has(c.name))) {
        // a token under another name: a leaf
        const src = c.type === 'SYMBOL' ? regexOf(rules[c.name]) : regexOf(c);
        return [[{ t: terminal(`alias:${src}:${e.value}`, src, e.named, e.value, e.named ? undefined : e.value), field: fieldName }]];
      }
      // the aliased rule's own children, under the new name (once per pair)
      const key = `_alias:${c.name}:${e.value}`;
      if (!prods.has(key)) {
        addNT(key, e.named ? e.value : undefined);
        prods.get(key).push(...alts(rules[c.name]));
      }
      return [[{ n: key, field: fieldName }]];
    }
    case 'SEQ': {
      let out = [[]];
      for (const m of e.members) {
        const ma = alts(m, fieldName);
        if (ma.length === 1) out = out.map((a) => [...a, ...ma[0]]);
        else {
          const nt = addNT(`_choice${fresh++}`);
          prods.get(nt).push(...ma);
          out = out.map((a) => [...a, { n: nt }]);
        }
      }
      return out;
    }
    case 'CHOICE': return e.members.flatMap((m) => alts(m, fieldName));
    case 'REPEAT': case 'REPEAT1': {
      const nt = addNT(`_repeat${fresh++}`);
      const body = alts(e.content, fieldName);
      const item = body.length === 1 ? body[0] : (() => { const c = addNT(`_choice${fresh++}`); prods.get(c).push(...body); return [{ n: c }]; })();
      prods.get(nt).push(item, [{ n: nt }, ...item]);
      return e.type === 'REPEAT' ? [[], [{ n: nt }]] : [[{ n: nt }]];
    }
    default: throw new Error(`unknown rule type ${e.type}`);
  }
}
for (const n of ruleNames) if (!lexicalRules.has(n)) addNT(n, n.startsWith('_') ? undefined : n);
for (const n of ruleNames) if (!lexicalRules.has(n)) prods.get(n).push(...alts(rules[n]));
const extras = (G.extras ? G.extras($) : [/\s/]).map(norm);
const extraRes = extras.map((e) =>
  e.type === 'SYMBOL' ? { re: terminals.get(`rule:${e.name}`).re, name: e.name } : { re: new RegExp(regexOf(e), 'y'), name: null });

// ---- the parser -------------------------------------------------------------------------
// Items: production (nt, alt index), dot, origin, and the children so far
// (a linked list).  Positions are character offsets.
function skipExtras(text, i, out) {
  for (;;) {
    let moved = false;
    for (const x of extraRes) {
      x.re.lastIndex = i;
      const m = x.re.exec(text);
      if (m && m[0].length > 0) {
        if (x.name && out) out.push({ type: x.name, named: true, start: i, end: i + m[0].length, children: [] });
        i += m[0].length;
        moved = true;
      }
    }
    if (!moved) return i;
  }
}

function parse(text) {
  const chart = new Map(); // pos -> {items: [], keys: Set}
  const at = (p) => {
    if (!chart.has(p)) chart.set(p, { items: [], keys: new Map() });
    return chart.get(p);
  };
  const add = (p, it) => {
    const c = at(p);
    const k = `${it.nt}|${it.alt}|${it.dot}|${it.origin}`;
    const seen = c.keys.get(k);
    if (seen) {
      const a = seen.kids, b = it.kids;
      const same = a === b || (a && b && a.prev === b.prev && a.node.start === b.node.start && a.node.end === b.node.end &&
        a.node.nt === b.node.nt && a.node.t === b.node.t && a.node.kids === b.node.kids);
      if (!same) seen.ambiguous = true;
      return;
    }
    c.keys.set(k, it);
    c.items.push(it);
  };
  for (let a = 0; a < prods.get(start).length; a++) add(0, { nt: start, alt: a, dot: 0, origin: 0, kids: null });
  const positions = [0];
  const done = new Set();
  let furthest = 0;
  while (positions.length) {
    positions.sort((x, y) => x - y);
    const p = positions.shift();
    if (done.has(p)) continue;
    done.add(p);
    furthest = Math.max(furthest, p);
    const c = at(p);
    const expected = new Set();
    for (let i = 0; i < c.items.length; i++) {
      const it = c.items[i];
      const rhs = prods.get(it.nt)[it.alt];
      if (it.dot === rhs.length) {
        // complete: advance the items waiting for it.nt at it.origin
        const node = { nt: it.nt, start: it.origin, end: p, kids: it.kids, item: it };
        const waiting = at(it.origin).items;
        for (let w = 0; w < waiting.length; w++) {
          const wi = waiting[w];
          const wr = prods.get(wi.nt)[wi.alt];
          if (wi.dot < wr.length && wr[wi.dot].n === it.nt)
            add(p, { nt: wi.nt, alt: wi.alt, dot: wi.dot + 1, origin: wi.origin, kids: { prev: wi.kids, sym: wr[wi.dot], node } });
        }
        continue;
      }
      const sym = rhs[it.dot];
      if (sym.n !== undefined) {
        for (let a = 0; a < prods.get(sym.n).length; a++) add(p, { nt: sym.n, alt: a, dot: 0, origin: p, kids: null });
        // a nullable symbol completed here already
        for (const other of c.items)
          if (other.nt === sym.n && other.origin === p && other.dot === prods.get(other.nt)[other.alt].length)
            add(p, { nt: it.nt, alt: it.alt, dot: it.dot + 1, origin: it.origin, kids: { prev: it.kids, sym, node: { nt: sym.n, start: p, end: p, kids: other.kids, item: other } } });
      } else expected.add(sym.t);
    }
    if (!expected.size) continue;
    // the tokens: after the extras, the longest match among the expected
    const q = skipExtras(text, p, null);
    let best = 0;
    const matches = [];
    for (const key of expected) {
      const t = terminals.get(key);
      t.re.lastIndex = q;
      const m = t.re.exec(text);
      if (!m || m[0].length === 0) continue;
      if (t.word && keywords.has(m[0])) continue; // a keyword: not the word token
      matches.push({ key, len: m[0].length });
      best = Math.max(best, m[0].length);
    }
    // a keyword and the word token match the same text: the keyword
    for (const m of matches.filter((x) => x.len === best)) {
      const end = q + m.len;
      for (const it of c.items) {
        const rhs = prods.get(it.nt)[it.alt];
        if (it.dot < rhs.length && rhs[it.dot].t === m.key)
          add(end, { nt: it.nt, alt: it.alt, dot: it.dot + 1, origin: it.origin, kids: { prev: it.kids, sym: rhs[it.dot], node: { t: m.key, start: q, end } } });
      }
      positions.push(end);
    }
  }
  const endPos = skipExtras(text, Math.max(...chart.keys()), null);
  let top = null;
  for (const [p, c] of chart) {
    if (skipExtras(text, p, null) !== text.length) continue;
    for (const it of c.items)
      if (it.nt === start && it.origin === 0 && it.dot === prods.get(start)[it.alt].length) top = { nt: start, start: 0, end: p, kids: it.kids, item: it };
  }
  if (!top) {
    const line = text.slice(0, furthest).split('\n').length;
    return { error: `no parse: stuck at line ${line} (offset ${furthest}: ${JSON.stringify(text.slice(skipExtras(text, furthest, null), skipExtras(text, furthest, null) + 30))})`, endPos };
  }
  try {
    return { tree: build(top, text) };
  } catch (e) {
    if (!e.ambiguous) throw e;
    const line = text.slice(0, e.ambiguous.origin).split('\n').length;
    return { error: `ambiguous: two trees for ${e.ambiguous.nt} at line ${line}` };
  }
}

// The syntax tree: hidden nonterminals flattened into their parents, the
// fields on the visible nodes they reach, the comments placed in the
// smallest node around them.
function build(top, text) {
  function kidsOf(node) {
    const out = [];
    for (let k = node.kids; k; k = k.prev) out.unshift(k);
    return out;
  }
  function expand(node, field) {
    if (node.t !== undefined) {
      const t = terminals.get(node.t);
      return [{ type: t.named ? t.name : t.literal ?? '', named: t.named, field, start: node.start, end: node.end, children: [] }];
    }
    if (node.item && node.item.ambiguous) throw Object.assign(new Error('ambiguous'), { ambiguous: node.item });
    const shown = visible.get(node.nt);
    // a field on a hidden rule goes to the visible nodes it is made of; a
    // visible node keeps it for itself
    const children = kidsOf(node).flatMap((k) => expand(k.node, shown ? k.sym.field : k.sym.field ?? field));
    if (!shown) return children;
    const s = children.length ? children[0].start : node.start;
    return [{ type: shown, named: true, field, start: s, end: children.length ? children.at(-1).end : node.end, children }];
  }
  const [tree] = expand(top, undefined);
  tree.start = 0;
  tree.end = text.length;
  // comments
  const comments = [];
  let i = 0;
  const tokens = [];
  (function leaves(n) {
    if (!n.children.length && n !== tree) tokens.push(n);
    n.children.forEach(leaves);
  })(tree);
  tokens.sort((a, b) => a.start - b.start);
  for (const t of [...tokens, { start: text.length }]) {
    skipExtras(text, i, comments);
    i = t.end;
  }
  for (const c of comments) {
    let n = tree;
    for (;;) {
      const inner = n.children.find((k) => k.children.length && k.start < c.start && c.end < k.end);
      if (!inner) break;
      n = inner;
    }
    n.children.push(c);
    n.children.sort((a, b) => a.start - b.start);
  }
  return tree;
}

function sexp(n) {
  const kids = n.children.filter((k) => k.named).map((k) => (k.field ? `${k.field}: ` : '') + sexp(k));
  return `(${n.type}${kids.length ? ' ' + kids.join(' ') : ''})`;
}
const squash = (s) => s.replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim();

// ---- the checks -----------------------------------------------------------------------
if (args[1] === '--print') {
  const r = parse(readFileSync(args[2], 'utf8'));
  if (r.error) {
    console.error(r.error);
    process.exit(1);
  }
  console.log(sexp(r.tree));
  process.exit(0);
}

// every workflow of the repository
function* zgFiles(d) {
  for (const name of readdirSync(d)) {
    if (name.startsWith('.') || name.startsWith('build') || name === 'node_modules') continue;
    const p = join(d, name);
    if (statSync(p).isDirectory()) yield* zgFiles(p);
    else if (name.endsWith('.zg') && !p.includes('/tests/fail/') && !p.includes('/tests/fuzz/')) yield p;
  }
}
const failures = [];
let files = 0;
for (const f of zgFiles(root)) {
  files++;
  const r = parse(readFileSync(f, 'utf8'));
  if (r.error) failures.push(`${f}: ${r.error}`);
}
assert.ok(files > 50, `only ${files} workflows found`);

// the corpus
let tests = 0;
const corpus = join(dir, 'test/corpus');
for (const name of readdirSync(corpus).sort()) {
  const text = readFileSync(join(corpus, name), 'utf8');
  const parts = text.split(/^={3,}\n(.*)\n={3,}\n/m).slice(1);
  assert.ok(parts.length >= 2, `${name}: no tests`);
  for (let i = 0; i < parts.length; i += 2) {
    const title = parts[i];
    const [src, want] = parts[i + 1].split(/^-{3,}\n/m);
    tests++;
    const r = parse(src);
    if (r.error) failures.push(`${name}: ${title}: ${r.error}`);
    else if (squash(sexp(r.tree)) !== squash(want)) failures.push(`${name}: ${title}:\n    want ${squash(want)}\n    got  ${squash(sexp(r.tree))}`);
  }
}

// the highlight queries: known node types and fields, every keyword
const hl = readFileSync(join(dir, 'queries/highlights.scm'), 'utf8').replace(/;.*$/gm, '');
const nodeTypes = new Set([...visible.values(), ...lexicalRules, ...extras.filter((e) => e.type === 'SYMBOL').map((e) => e.name),
  ...[...terminals.values()].filter((t) => t.named).map((t) => t.name)]);
// the named tokens the queries highlight, and what they match
const highlightedTokens = [...terminals.values()].filter((t) => t.named && new RegExp(`\\(${t.name}\\)`).test(hl));
const tokenHighlights = (kw) => highlightedTokens.some((t) => new RegExp(`^(?:${t.re.source})$`).test(kw));
const fields = new Set();
(function collect(e) {
  if (!e || typeof e !== 'object') return;
  if (e.type === 'FIELD') fields.add(e.name);
  for (const v of Object.values(e)) if (Array.isArray(v)) v.forEach(collect); else if (v && typeof v === 'object') collect(v);
})(rules);
for (const m of hl.matchAll(/\(([a-z_]+)/g)) if (!nodeTypes.has(m[1])) failures.push(`highlights.scm: unknown node type ${m[1]}`);
for (const m of hl.matchAll(/([a-z_]+):/g)) if (!fields.has(m[1])) failures.push(`highlights.scm: unknown field ${m[1]}`);
const quoted = new Set([...hl.matchAll(/"([^"\s]+)"/g)].map((m) => m[1]));
const lexer = readFileSync(join(root, 'grammar/lexer.l'), 'utf8');
const lexerKeywords = [];
for (const line of lexer.split('\n')) {
  const m = /^((?:"[a-z_]+"\|?)+)\s+\{/.exec(line);
  if (m) for (const w of m[1].matchAll(/"([a-z_]+)"/g)) lexerKeywords.push(w[1]);
}
assert.ok(lexerKeywords.length >= 30);
// every keyword must be highlighted, as a string in the queries or as a node
for (const kw of lexerKeywords)
  if (!quoted.has(kw) && !tokenHighlights(kw))
    failures.push(`highlights.scm: keyword ${kw} of grammar/lexer.l is not highlighted`);

if (failures.length) {
  console.error(`tree-sitter grammar: ${failures.length} failures:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(`tree-sitter grammar: ok (${files} workflows parsed, ${tests} corpus tests, ${lexerKeywords.length} keywords of the lexer in the queries)`);
