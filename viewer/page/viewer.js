/* viewer.js — the zgc viewer: draws a message sequence chart.
 *
 * Input: the JSON of the element #zg-data, one of
 *   {"mode":"trace","title":T,"lines":[trace line objects…]}
 *       a run's trace (docs/runtime.md, "Trace format"), as zgc view writes it;
 *   {"mode":"live","title":T,"lifelines":[names…]}
 *       a running workflow: the same lines arrive as Server-Sent Events from
 *       ./events (runtime/view/server.c), plus "wait" lines;
 *   {"mode":"workflow","title":T,"lifelines":[…],"focus":L|null,"items":[…]}
 *       a workflow's statements (zgc view FILE.zg; viewer/workflow.c).
 *
 * Layout: every event gets a row.  A run's event goes one row below the
 * previous event of its lifeline and, for a receive, one row below its
 * send — the longest causal path to it — so a receive is never drawn above
 * its send, and events that are not causally ordered may share a row.  Lines
 * may come in any order (the merged trace of per-lifeline processes lists
 * each lifeline's events in turn): an event waits until its lifeline's
 * previous event and, for a receive, its send are placed.
 *
 * Rendering is virtual: only the rows in view (and a margin) are in the SVG,
 * redrawn on scroll, so 100,000 events cost what a screenful costs.  Messages
 * are indexed by 64-row buckets of the rows they span.  Every text from the
 * data goes into the DOM escaped (esc) or as textContent: nothing in a trace
 * is ever markup.
 *
 * For tests and tools, window.zgView exposes the model's counts and a few
 * functions (scrollToRow, select); the DOM carries data-msg / data-ev ids.
 */
(function () {
  'use strict';

  var BUCKET = 64;
  var BASE_ROW = 30, BASE_COL = 190, MARGIN = 20, HEAD = 34;
  var LABEL_MAX = 42;

  var $ = function (id) { return document.getElementById(id); };

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;';
    });
  }
  function trunc(s, n) {
    s = String(s);
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }
  function jtext(v) {
    return typeof v === 'string' ? v : JSON.stringify(v);
  }
  function valuesText(vals) {
    if (!Array.isArray(vals)) return '';
    return vals.map(function (v) { return typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v); }).join(', ');
  }

  /* ---- the model ------------------------------------------------------- */

  function Model() {
    this.lifelines = [];      /* names, in declaration order */
    this.lindex = new Map();  /* name -> index */
    this.events = [];         /* placed events */
    this.byId = [];           /* events by id (the order they were taken:
                                 data-ev), placed or not */
    this.messages = [];       /* {id, from, to, r1, r2, send, recv, ctl, label} */
    this.msgById = new Map();
    this.rows = [];           /* rows[r] = [event index…] */
    this.buckets = [];        /* buckets[b] = [message index…] */
    this.frames = [];         /* {kind, r1, r2, l1, l2, label, seps} */
    this.fbuckets = [];
    this.marks = [];          /* {l, r, text}: errors */
    this.nrows = 0;
    this.lines = 0;           /* lines taken */
    this.nevents = 0;         /* events taken (placed or waiting) */
    this.nsends = 0;
    this.result = undefined;
    this.error = null;
    this.ended = false;
    this.waiting = new Map(); /* lifeline -> what it waits for (live) */
    /* placement state */
    this.next = [];           /* per lifeline: next index to place */
    this.lastRow = [];
    this.pending = [];        /* per lifeline: Map index -> event */
    this.sendRow = new Map(); /* msg id -> row of its send */
    this.sendOf = new Map();  /* msg id -> send event */
    this.blocked = new Map(); /* msg id -> lifeline waiting for that send */
    /* store operations: a read of version T comes after the commit T of
     * its store (the commit wrote what it read), as a receive after its
     * send */
    this.commitRow = new Map(); /* "store#txn" -> row of that commit */
    this.commitOf = new Map();  /* "store#txn" of the commits in -> their event */
    this.readWait = new Map();  /* "store#txn" -> lifelines waiting for it */
    this.retries = [];        /* per lifeline: retry lines before the act */
    this.parts = new Map();   /* parallel branch instances, see addPar */
    this.byLife = [];         /* per lifeline: its placed events by index - 1 */
    this.startStore = [];     /* per lifeline: the store of its start line */
    /* durable runs: resume lines, each {l (-1: every lifeline), attempt,
     * run, n: per lifeline the highest event index taken before it,
     * stopped: the end line of the attempt before it, or null} */
    this.resumes = [];
    this.maxIdx = [];         /* per lifeline: highest event index taken */
    this.gapAt = [];          /* per lifeline: Set of event indexes a resume
                                 boundary comes before (a row is left free) */
    this.prevLine = null;     /* the line taken last */
  }

  Model.prototype.lifeline = function (name) {
    var i = this.lindex.get(name);
    if (i === undefined) {
      i = this.lifelines.length;
      this.lifelines.push(name);
      this.lindex.set(name, i);
      this.next.push(1);
      this.lastRow.push(-1);
      this.pending.push(new Map());
      this.retries.push([]);
      this.byLife.push([]);
      this.startStore.push({});
      this.maxIdx.push(0);
      this.gapAt.push(new Set());
    }
    return i;
  };

  Model.prototype.addLine = function (o) {
    this.lines++;
    if (!o || typeof o !== 'object') return;
    var prev = this.prevLine;
    this.prevLine = o;
    var k = o.kind;
    if (k === 'resume') {
      this.addResume(o, prev && prev.kind === 'end' ? prev : null);
      return;
    }
    if (k === 'start') {
      var sl = this.lifeline(String(o.lifeline));
      if (o.store && typeof o.store === 'object') this.startStore[sl] = o.store;
      return;
    }
    if (k === 'end') {
      this.ended = true;
      if ('error' in o) {
        this.error = String(o.error);
        var m = /^lifeline ([^:]+):/.exec(this.error);
        var l = m && this.lindex.has(m[1]) ? this.lindex.get(m[1]) : -1;
        this.marks.push({ l: l, text: this.error, end: o });
      } else {
        this.result = o.result;
      }
      this.waiting.clear();
      return;
    }
    if (k === 'retry') {
      this.retries[this.lifeline(String(o.lifeline))].push(o);
      return;
    }
    if (k === 'note') {
      this.note = String(o.text || '');
      return;
    }
    if (k === 'wait') {
      this.waiting.set(this.lifeline(String(o.lifeline)), String(o.on || ''));
      return;
    }
    if (typeof o.lifeline !== 'string' || typeof o.index !== 'number') return;
    /* an event: every lifeline of its clock exists, in declaration order
     * (every clock names them all: the first one is enough) */
    if (!this.vcSeen && o.vc && typeof o.vc === 'object') {
      for (var name in o.vc) this.lifeline(name);
      this.vcSeen = true;
    }
    var li = this.lifeline(o.lifeline);
    this.waiting.delete(li);
    if (o.index > this.maxIdx[li]) this.maxIdx[li] = o.index;
    var ev = { l: li, idx: o.index, kind: String(k), o: o, row: -1, id: this.nevents++ };
    this.byId[ev.id] = ev;
    if (k === 'act') {
      var rs = this.retries[li];
      if (rs.length) {
        ev.retries = rs.filter(function (r) { return r.action === o.action; });
        this.retries[li] = rs.filter(function (r) { return r.action !== o.action; });
      }
    }
    if (k === 'send') {
      this.nsends++;
      this.sendOf.set(o.msg, ev);
    }
    if (k === 'commit') this.commitOf.set(String(o.store) + '#' + String(o.txn), ev);
    this.pending[li].set(o.index, ev);
    this.drain(li);
  };

  /* A resume line: a durable run's next attempt begins, on every lifeline
   * or on the one it names, after the events taken so far there (the lines
   * of one lifeline come in its order: one process's file, or one
   * lifeline's part of a merged trace).  An end line right before it ended
   * the attempt before, not the run: the run goes on. */
  Model.prototype.addResume = function (o, end) {
    var l = typeof o.lifeline === 'string' ? this.lifeline(o.lifeline) : -1;
    if (end) {
      this.ended = false;
      this.result = undefined;
      if (this.error !== null) {
        this.error = null;
        this.marks = this.marks.filter(function (mk) { return mk.end !== end; });
      }
    }
    var r = { l: l, attempt: +o.run_attempt || 0, run: String(o.run), n: this.maxIdx.slice(), stopped: end };
    this.resumes.push(r);
    for (var q = 0; q < this.lifelines.length; q++)
      if (l < 0 || q === l) this.gapAt[q].add(r.n[q] + 1);
  };

  /* Places what can be placed, starting with lifeline li. */
  Model.prototype.drain = function (li) {
    var work = [li];
    while (work.length) {
      var l = work.pop();
      var pend = this.pending[l];
      for (;;) {
        var ev = pend.get(this.next[l]);
        if (!ev) break;
        var row = this.lastRow[l] + 1 + (this.gapAt[l].has(ev.idx) ? 1 : 0);
        if (ev.kind === 'recv') {
          var sr = this.sendRow.get(ev.o.msg);
          if (sr === undefined && !(this.complete && !this.sendOf.has(ev.o.msg))) {
            this.blocked.set(ev.o.msg, l);
            break;
          }
          /* (a complete trace without the send: a per-lifeline trace; the
           * receive follows its lifeline alone) */
          if (sr !== undefined && sr + 1 > row) row = sr + 1;
        }
        if (ev.kind === 'read' && +ev.o.version > 0 && !ev.loose) {
          var ck = String(ev.o.store) + '#' + String(ev.o.version);
          var cr = this.commitRow.get(ck);
          /* the commit of another branch of this lifeline, numbered after
           * the read (events of concurrent branches are numbered in the
           * order they were recorded): the read follows its lifeline */
          var ce = this.commitOf.get(ck);
          if (cr === undefined && ce && ce.l === l && ce.idx > ev.idx) ev.loose = true;
          else if (cr === undefined && !(this.complete && !ce)) {
            if (!this.readWait.has(ck)) this.readWait.set(ck, []);
            this.readWait.get(ck).push(l);
            break;
          }
          if (cr !== undefined && cr + 1 > row) row = cr + 1;
        }
        pend.delete(this.next[l]);
        this.next[l]++;
        this.place(ev, row);
        if (ev.kind === 'send' && this.blocked.has(ev.o.msg)) {
          work.push(this.blocked.get(ev.o.msg));
          this.blocked.delete(ev.o.msg);
        }
        if (ev.kind === 'commit') {
          var wk = String(ev.o.store) + '#' + String(ev.o.txn);
          if (this.readWait.has(wk)) {
            work = work.concat(this.readWait.get(wk));
            this.readWait.delete(wk);
          }
        }
      }
    }
  };

  /* Every line is in: receives whose send is not in the trace are placed
   * after their lifeline's previous event. */
  Model.prototype.finish = function () {
    this.complete = true;
    for (var l = 0; l < this.lifelines.length; l++) this.drain(l);
    /* reads still waiting for commits that wait for them, through other
     * lifelines (see drain): drawn in their lifeline's order, one at a
     * time */
    while (this.readWait.size) {
      var first = this.readWait.entries().next().value;
      var lw = first[1].shift();
      if (!first[1].length) this.readWait.delete(first[0]);
      var ev = this.pending[lw].get(this.next[lw]);
      if (ev && ev.kind === 'read') ev.loose = true;
      this.drain(lw);
    }
  };

  /* What lifeline l's store held after its event n (0: its start): the
   * start line's store with the writes of its events 1..n. */
  Model.prototype.storeAt = function (l, n) {
    var st = {}, k;
    for (k in this.startStore[l]) st[k] = this.startStore[l][k];
    var evs = this.byLife[l];
    for (var i = 0; i < n && i < evs.length; i++) {
      var w = evs[i] && evs[i].o.writes;
      if (w && typeof w === 'object') for (k in w) st[k] = w[k];
    }
    return st;
  };

  Model.prototype.place = function (ev, row) {
    ev.row = row;
    this.lastRow[ev.l] = row;
    this.byLife[ev.l][ev.idx - 1] = ev;
    var i = this.events.length;
    this.events.push(ev);
    while (this.rows.length <= row) this.rows.push([]);
    this.rows[row].push(i);
    if (row + 1 > this.nrows) this.nrows = row + 1;
    var o = ev.o;
    if (ev.kind === 'commit') this.commitRow.set(String(o.store) + '#' + String(o.txn), row);
    if (ev.kind === 'send') {
      this.sendRow.set(o.msg, row);
      var m = {
        id: String(o.msg), from: ev.l, to: this.lifeline(String(o.to)), r1: row, r2: -1,
        send: ev, recv: null, ctl: o.control != null,
        label: o.control != null ? String(o.control) + ' = ' + valuesText(o.values)
                                 : valuesText(o.values)
      };
      ev.msg = this.messages.length;
      this.messages.push(m);
      this.msgById.set(m.id, ev.msg);
      this.bucketAdd(ev.msg, row, row + 1);
    } else if (ev.kind === 'recv') {
      var mi = this.msgById.get(String(o.msg));
      if (mi !== undefined) {
        var mm = this.messages[mi];
        mm.r2 = row;
        mm.recv = ev;
        ev.msg = mi;
        this.bucketAdd(mi, mm.r1, row);
      }
    }
    if (typeof o.channel === 'string') {
      if (o.channel.indexOf('/par') >= 0 && /\/par\d+\.\d+$/.test(o.channel)) this.addPar(ev);
      else if (o.coregion === true) this.addCoregion(ev);
      else this.parts.delete(ev.l);
    }
  };

  Model.prototype.bucketAdd = function (mi, r1, r2) {
    for (var b = Math.floor(r1 / BUCKET); b <= Math.floor(r2 / BUCKET); b++) {
      while (this.buckets.length <= b) this.buckets.push([]);
      var bk = this.buckets[b];
      if (bk[bk.length - 1] !== mi) bk.push(mi);
    }
  };

  /* Parallel branches: an event of a message on channel C/parN.K belongs
   * to the branch instance of its lifeline's previous message event when
   * that was on C too (actions and decisions between them have no
   * channel), else to its message's other end's, else to a new one. */
  Model.prototype.addPar = function (ev) {
    var ch = ev.o.channel;
    var last = this.parts.get(ev.l);
    var fr = null;
    if (last && last.chan === ch) fr = last.frame;
    if (!fr && ev.kind === 'recv') {
      var s = this.sendOf.get(ev.o.msg);
      if (s && s.parFrame) fr = s.parFrame;
    }
    if (!fr) {
      var m = /^(.*)\/par(\d+)\.(\d+)$/.exec(ch);
      fr = { kind: 'par', r1: ev.row, r2: ev.row, l1: ev.l, l2: ev.l,
             label: 'parallel ' + m[2] + ' · branch ' + m[3] };
      this.frames.push(fr);
    }
    this.grow(fr, ev);
    ev.parFrame = fr;
    this.parts.set(ev.l, { chan: ch, frame: fr });
  };

  /* A coregion (receives marked "coregion": true): consecutive ones of a
   * lifeline on one channel, one frame. */
  Model.prototype.addCoregion = function (ev) {
    var last = this.parts.get(ev.l);
    var fr = last && last.co && last.idx === ev.idx - 1 && last.chan === ev.o.channel ? last.frame : null;
    if (!fr) {
      fr = { kind: 'coregion', r1: ev.row, r2: ev.row, l1: ev.l, l2: ev.l, label: 'coregion' };
      this.frames.push(fr);
    }
    this.grow(fr, ev);
    this.parts.set(ev.l, { chan: ev.o.channel, frame: fr, co: true, idx: ev.idx });
  };

  Model.prototype.grow = function (fr, ev) {
    if (ev.row < fr.r1) fr.r1 = ev.row;
    if (ev.row > fr.r2) fr.r2 = ev.row;
    if (ev.l < fr.l1) fr.l1 = ev.l;
    if (ev.l > fr.l2) fr.l2 = ev.l;
    if (ev.kind === 'send' || ev.kind === 'recv') {
      var other = this.lindex.get(String(ev.kind === 'send' ? ev.o.to : ev.o.from));
      if (other !== undefined) {
        if (other < fr.l1) fr.l1 = other;
        if (other > fr.l2) fr.l2 = other;
      }
    }
    fr.dirty = true;
  };

  /* frames are few; their buckets are rebuilt when one has grown */
  Model.prototype.frameBuckets = function () {
    var dirty = false;
    for (var i = 0; i < this.frames.length; i++) if (this.frames[i].dirty) { dirty = true; this.frames[i].dirty = false; }
    if (!dirty && this.fbuckets.built === this.frames.length) return this.fbuckets;
    var fb = [];
    for (var f = 0; f < this.frames.length; f++) {
      var fr = this.frames[f];
      for (var b = Math.floor(fr.r1 / BUCKET); b <= Math.floor((fr.r2 + 1) / BUCKET); b++) {
        while (fb.length <= b) fb.push([]);
        fb[b].push(f);
      }
    }
    fb.built = this.frames.length;
    this.fbuckets = fb;
    return fb;
  };

  /* ---- workflows: statements as a chart -------------------------------- */

  function workflowModel(d) {
    var M = new Model();
    (d.lifelines || []).forEach(function (n) { M.lifeline(String(n)); });
    var row = 0;
    function lifeOf(x) { return typeof x === 'number' ? x : M.lifeline(String(x)); }
    function put(ev) {
      ev.row = row;
      ev.id = M.events.length;
      var i = M.events.length;
      M.events.push(ev);
      while (M.rows.length <= row) M.rows.push([]);
      M.rows[row].push(i);
      return i;
    }
    function span(items, acc) {
      items.forEach(function (it) {
        ['from', 'to', 'l', 'owner'].forEach(function (f) {
          if (it[f] !== undefined && it[f] !== null) {
            var l = lifeOf(it[f]);
            if (l < acc.l1) acc.l1 = l;
            if (l > acc.l2) acc.l2 = l;
          }
        });
        ['body', 'else'].forEach(function (f) { if (Array.isArray(it[f])) span(it[f], acc); });
        if (Array.isArray(it.branches)) it.branches.forEach(function (b) { span(b, acc); });
      });
      return acc;
    }
    function walk(items) {
      items.forEach(function (it) {
        var k = it.k;
        if (k === 'msg') {
          var from = lifeOf(it.from), to = lifeOf(it.to);
          var o = { kind: 'msg', line: it.line, label: it.label, control: it.control || null,
                    from: M.lifelines[from], to: M.lifelines[to] };
          var s = put({ l: from, kind: 'send', o: o });
          var r = put({ l: to, kind: from === to ? 'self' : 'recv', o: o });
          var m = { id: 'm' + M.messages.length, from: from, to: to, r1: row, r2: row,
                    send: M.events[s], recv: M.events[r], ctl: !!it.control,
                    label: it.label || '', flat: true };
          M.events[s].msg = M.events[r].msg = M.messages.length;
          M.messages.push(m);
          M.bucketAdd(M.messages.length - 1, row, row);
          M.nsends++;
          row++;
        } else if (k === 'act' || k === 'return' || k === 'skip') {
          put({ l: lifeOf(it.l), kind: k === 'act' ? 'act' : k, o: it, label: it.label });
          row++;
        } else if (k === 'if' || k === 'while' || k === 'par' || k === 'coregion' || k === 'recv-any') {
          var acc = span([it], { l1: 1e9, l2: -1 });
          if (acc.l2 < 0) acc = { l1: 0, l2: Math.max(0, M.lifelines.length - 1) };
          var fr = { kind: k === 'while' ? 'loop' : k === 'if' ? 'alt' : k === 'recv-any' ? 'coregion' : k,
                     r1: row, l1: acc.l1, l2: acc.l2, seps: [], o: it,
                     label: k === 'par' ? 'parallel' : k === 'coregion' || k === 'recv-any' ? 'coregion'
                          : (k + (it.guard ? ' [' + it.guard + ']' : '') +
                             (it.owner !== undefined && it.owner !== null ? ' @ ' + M.lifelines[lifeOf(it.owner)] : '') +
                             (it.decided ? ' — decided by ' + it.decided : '')) };
          M.frames.push(fr);
          row++; /* the frame's label */
          if (k === 'par') {
            (it.branches || []).forEach(function (b, i) {
              if (i > 0) { fr.seps.push(row); row++; }
              walk(b);
            });
          } else {
            walk(it.body || []);
            if (it['else'] && it['else'].length) {
              fr.seps.push(row);
              row++;
              walk(it['else']);
            }
          }
          fr.r2 = row;
          row++;
        }
      });
    }
    walk(d.items || []);
    M.nrows = row;
    M.nevents = M.events.length;
    M.ended = true;
    return M;
  }

  /* ---- the view ---------------------------------------------------------- */

  var data;
  try {
    data = JSON.parse($('zg-data').textContent);
  } catch (e) {
    data = { mode: 'trace', title: 'zgc view', lines: [] };
    console.error('zgc view: the page data is not JSON: ' + e.message);
  }
  var t0 = performance.now();
  var M;
  if (data.mode === 'workflow') {
    M = workflowModel(data);
  } else {
    M = new Model();
    (data.lifelines || []).forEach(function (n) { M.lifeline(String(n)); });
    (data.lines || []).forEach(function (o) { M.addLine(o); });
    if (data.mode === 'trace') M.finish();
  }
  var modelMs = performance.now() - t0;

  var zoom = 1;
  var hidden = new Set();  /* hidden lifelines */
  var showCtl = true;
  var selected = null;     /* {type:'ev'|'msg', i} */
  var past = null;         /* a selected decision's clock: its causal past is marked */
  var hits = [];           /* search results: event ids */
  var hitPos = -1;
  var hitSet = new Set();
  var cols = [];           /* visible lifeline -> x; -1 when hidden */

  document.title = 'zgc view — ' + (data.title || '');
  $('title').textContent = data.title || 'zgc view';
  $('title').title = data.title || '';

  function rowH() { return BASE_ROW * zoom; }
  function colW() { return BASE_COL * zoom; }
  function yOf(r) { return HEAD + r * rowH() + rowH() / 2; }

  function layoutCols() {
    cols = [];
    var k = 0;
    for (var l = 0; l < M.lifelines.length; l++) {
      if (hidden.has(l)) cols.push(-1);
      else cols.push(MARGIN + k++ * colW() + colW() / 2);
    }
    return k;
  }

  var chart = $('chart'), svg = $('svg'), spacer = $('spacer'), heads = $('heads');

  function sizeAll() {
    var n = layoutCols();
    var w = MARGIN * 2 + n * colW();
    var h = HEAD + (M.nrows + 2) * rowH();
    spacer.style.height = (h - HEAD) + 'px';
    spacer.style.width = w + 'px';
    heads.style.width = Math.max(w, chart.clientWidth) + 'px';
    var hs = '';
    for (var l = 0; l < M.lifelines.length; l++) {
      if (cols[l] < 0) continue;
      var wait = M.waiting.get(l);
      hs += '<div class="lifeline-head" data-name="' + esc(M.lifelines[l]) + '" style="left:' +
            (cols[l] - colW() / 2 + 6) + 'px;width:' + (colW() - 12) + 'px" title="' +
            esc(M.lifelines[l] + (wait ? ' — waiting for ' + wait : '')) + '">' + esc(M.lifelines[l]) +
            (wait ? ' <span class="wait">⏳ ' + esc(trunc(wait, 24)) + '</span>' : '') + '</div>';
    }
    heads.innerHTML = hs;
    var fl = '';
    for (var i = 0; i < M.lifelines.length; i++)
      fl += '<label><input type="checkbox" data-l="' + i + '"' + (hidden.has(i) ? '' : ' checked') + '> ' +
            esc(M.lifelines[i]) + '</label>';
    $('filter-list').innerHTML = fl;
  }

  var drawPending = false;
  function requestDraw() {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(function () { drawPending = false; draw(); });
  }

  function evClass(ev) {
    var c = ev.kind;
    if (selected && selected.type === 'ev' && selected.i === ev.id) c += ' sel';
    else if (past && ev.o.lifeline !== undefined && ev.idx <= (past[ev.o.lifeline] || 0)) c += ' past';
    /* the frontier of the causal cut: per lifeline the last event seen */
    if (past && ev.o.lifeline !== undefined && ev.idx === past[ev.o.lifeline]) c += ' frontier';
    if (hitSet.has(ev.id)) c += ' hitmark';
    return c;
  }

  function draw() {
    var started = performance.now();
    var top = chart.scrollTop, h = chart.clientHeight, w = chart.clientWidth;
    var rh = rowH(), cw = colW();
    var r0 = Math.max(0, Math.floor((top - HEAD) / rh) - 2);
    var r1 = Math.min(M.nrows, Math.ceil((top + h) / rh) + 2);
    var y0 = HEAD + r0 * rh, y1 = HEAD + r1 * rh + rh;
    var fs = Math.max(7, Math.min(13, 12 * zoom));
    var out = [];
    var svgW = Math.max(w, MARGIN * 2 + cols.filter(function (x) { return x >= 0; }).length * cw);
    svg.setAttribute('width', svgW);
    svg.setAttribute('height', HEAD + (M.nrows + 2) * rh);
    svg.setAttribute('font-size', fs);
    /* lifelines */
    for (var l = 0; l < cols.length; l++)
      if (cols[l] >= 0) out.push('<line class="life" x1="' + cols[l] + '" x2="' + cols[l] + '" y1="' + Math.max(HEAD, y0) + '" y2="' + y1 + '"/>');
    /* frames under everything */
    var fb = M.frameBuckets(), seenF = new Set();
    for (var b = Math.floor(r0 / BUCKET); b <= Math.floor(r1 / BUCKET) && b < fb.length; b++) {
      fb[b].forEach(function (f) {
        if (seenF.has(f)) return;
        seenF.add(f);
        var fr = M.frames[f];
        if (fr.r2 < r0 || fr.r1 > r1) return;
        var xs = [];
        for (var q = fr.l1; q <= fr.l2; q++) if (cols[q] >= 0) xs.push(cols[q]);
        if (!xs.length) return;
        var x1 = Math.min.apply(null, xs) - cw * 0.45, x2 = Math.max.apply(null, xs) + cw * 0.45;
        var ya = HEAD + fr.r1 * rh + 2, yb = HEAD + (fr.r2 + 1) * rh - 2;
        var s = '<g class="frame ' + esc(fr.kind) + '" data-frame="' + f + '"><rect x="' + x1 + '" y="' + ya +
                '" width="' + (x2 - x1) + '" height="' + (yb - ya) + '" rx="4"/>' +
                '<title>' + esc(fr.label) + '</title><text x="' + (x1 + 5) + '" y="' + (ya + fs + 1) + '">' + esc(trunc(fr.label, Math.max(12, Math.floor((x2 - x1) / (fs * 0.6))))) + '</text>';
        (fr.seps || []).forEach(function (sr) {
          var ys = HEAD + sr * rh + rh / 2;
          s += '<line class="sep" x1="' + x1 + '" x2="' + x2 + '" y1="' + ys + '" y2="' + ys + '"/>';
        });
        out.push(s + '</g>');
      });
    }
    cutSvg(out, r0, r1, cw);
    attemptsSvg(out, r0, r1, fs, cw);
    /* messages */
    var seen = new Set();
    for (b = Math.floor(r0 / BUCKET); b <= Math.floor(r1 / BUCKET) && b < M.buckets.length; b++) {
      var bk = M.buckets[b];
      for (var j = 0; j < bk.length; j++) {
        var mi = bk[j];
        if (seen.has(mi)) continue;
        seen.add(mi);
        var m = M.messages[mi];
        if (m.ctl && !showCtl) continue;
        var xa = cols[m.from], xb = cols[m.to];
        if (xa < 0 || xb < 0) continue;
        var ra = m.r1, rb = m.r2 >= 0 ? m.r2 : m.r1;
        if (rb < r0 || ra > r1) continue;
        out.push(msgSvg(m, mi, xa, xb, fs, cw));
      }
    }
    /* events */
    for (var r = r0; r < r1 && r < M.rows.length; r++) {
      var row = M.rows[r];
      for (var k = 0; k < row.length; k++) {
        var ev = M.events[row[k]];
        if (cols[ev.l] < 0) continue;
        out.push(evSvg(ev, cols[ev.l], yOf(ev.row), fs, cw));
      }
    }
    /* errors: under the lifeline's last event */
    M.marks.forEach(function (mk) {
      var ll = mk.l >= 0 ? mk.l : 0;
      if (cols[ll] < 0) return;
      var rr = mk.l >= 0 ? M.lastRow[mk.l] + 1 : M.nrows;
      if (rr < r0 - 1 || rr > r1 + 1) return;
      var y = yOf(rr);
      out.push('<g class="err" data-err="1"><circle class="errmark" cx="' + cols[ll] + '" cy="' + y + '" r="' + 6 * Math.max(zoom, 0.6) +
               '"/><text class="errtext" x="' + (cols[ll] + 10) + '" y="' + (y + fs / 3) + '">✖ ' + esc(trunc(mk.text, 90)) + '</text></g>');
    });
    svg.innerHTML = out.join('');
    if (window.zgView) window.zgView.drawMs = performance.now() - started;
  }

  function msgSvg(m, mi, xa, xb, fs, cw) {
    var ya = yOf(m.r1), yb = m.r2 >= 0 ? yOf(m.r2) : ya + rowH() * 0.6;
    var cls = 'msg' + (m.ctl ? ' ctl' : '') + (m.r2 < 0 ? ' pending' : '') +
              (selected && selected.type === 'msg' && selected.i === mi ? ' sel' : '');
    var s = '<g class="' + cls + '" data-msg="' + esc(m.id) + '" data-i="' + mi + '" data-y1="' + ya + '" data-y2="' + yb + '">';
    if (xa === xb) {
      /* a message to itself: a small loop */
      var xr = xa + cw * 0.25;
      s += '<polyline fill="none" stroke="currentColor" points="' + xa + ',' + ya + ' ' + xr + ',' + ya + ' ' + xr + ',' + (yb + rowH() * 0.3) + ' ' + (xa + 4) + ',' + (yb + rowH() * 0.3) + '"/>';
      s += '<line class="hit" x1="' + xa + '" y1="' + ya + '" x2="' + xr + '" y2="' + yb + '"/>';
      s += '<text x="' + (xr + 4) + '" y="' + (ya + fs) + '">' + esc(trunc(m.label, LABEL_MAX)) + '</text></g>';
      return s;
    }
    var dir = xb > xa ? 1 : -1;
    var ah = 7 * Math.max(zoom, 0.6);
    /* the arrow ends at the receive (or, still unreceived, halfway) */
    var xe = m.r2 >= 0 ? xb - dir * 3 : xa + (xb - xa) * 0.5;
    s += '<line x1="' + xa + '" y1="' + ya + '" x2="' + xe + '" y2="' + yb + '"/>';
    var ang = Math.atan2(yb - ya, xe - xa);
    var p1x = xe - ah * Math.cos(ang - 0.4), p1y = yb - ah * Math.sin(ang - 0.4);
    var p2x = xe - ah * Math.cos(ang + 0.4), p2y = yb - ah * Math.sin(ang + 0.4);
    s += '<polygon points="' + xe + ',' + yb + ' ' + p1x + ',' + p1y + ' ' + p2x + ',' + p2y + '" fill="' + (m.ctl ? '#8a8f9c' : m.r2 < 0 ? '#b3261e' : '#1d3f8f') + '"/>';
    s += '<line class="hit" x1="' + xa + '" y1="' + ya + '" x2="' + xe + '" y2="' + yb + '"/>';
    /* the label above the arrow's start, where it belongs to one arrow */
    var maxc = Math.max(6, Math.floor((Math.abs(xe - xa) - 12) / (fs * 0.6)));
    var tx = xa + dir * 8, ty = ya - 4;
    s += '<text text-anchor="' + (dir > 0 ? 'start' : 'end') + '" x="' + tx + '" y="' + ty + '">' + esc(trunc(m.label, Math.min(maxc, LABEL_MAX))) + '</text></g>';
    return s;
  }

  function attAttr(ev) {
    var a = ev.o.run_attempt;
    return typeof a === 'number' ? ' data-attempt="' + a + '"' : '';
  }

  /* A durable run's attempts (Model.addResume): on every lifeline a resume
   * concerns, a boundary in the free row before the attempt's first event
   * there ("attempt k", and the error of an attempt that stopped), and
   * the lifeline's stretch of each attempt as a coloured band. */
  function boundaryRow(l, n) {
    var next = M.byLife[l][n];
    if (next && next.row >= 0) return next.row - 1;
    var prev = n > 0 ? M.byLife[l][n - 1] : null;
    return prev && prev.row >= 0 ? prev.row + 1 : n > 0 ? M.lastRow[l] + 1 : 0;
  }
  function attemptsSvg(out, r0, r1, fs, cw) {
    if (!M.resumes.length) return;
    for (var l = 0; l < M.lifelines.length; l++) {
      if (cols[l] < 0) continue;
      var x = cols[l];
      /* boundaries of l in order, those at one place together */
      var bs = [];
      M.resumes.forEach(function (r) {
        if (r.l >= 0 && r.l !== l) return;
        var n = r.n[l] || 0, last = bs[bs.length - 1];
        if (last && last.n === n) last.rs.push(r);
        else bs.push({ n: n, row: boundaryRow(l, n), rs: [r] });
      });
      if (!bs.length) continue;
      var first = bs[0].rs[0].attempt - 1;
      var from = -0.5, att = first;
      for (var i = 0; i <= bs.length; i++) {
        var to = i < bs.length ? bs[i].row : Math.max(M.nrows, M.lastRow[l] + 1) + 0.5;
        if (att > 0 && to >= r0 - 1 && from <= r1 + 1 && to > from) {
          var ya = HEAD + (from + 0.5) * rowH(), yb = HEAD + (to + 0.5) * rowH();
          out.push('<rect class="attempt a' + (att % 4) + '" data-l="' + l + '" data-attempt="' + att + '" x="' + (x - 5) + '" y="' + ya +
                   '" width="10" height="' + Math.max(0, yb - ya) + '"/>');
        }
        if (i === bs.length) break;
        var b = bs[i];
        att = b.rs[b.rs.length - 1].attempt;
        from = b.row;
        if (b.row < r0 - 1 || b.row > r1 + 1) continue;
        var y = yOf(b.row);
        var atts = b.rs.map(function (r) { return r.attempt; });
        var stopped = b.rs.filter(function (r) { return r.stopped && 'error' in r.stopped; });
        var text = (atts.length > 1 ? 'attempts ' : 'attempt ') + atts.join(', ');
        var title = b.rs.map(function (r) {
          return 'resume: attempt ' + r.attempt + ' of run ' + r.run +
                 (r.stopped ? '; the attempt before ended: ' + ('error' in r.stopped ? 'error: ' + r.stopped.error : 'result ' + JSON.stringify(r.stopped.result)) : '');
        }).join('\n');
        var s = '<g class="resume' + (b.rs.some(function (r) { return r.stopped && 'error' in r.stopped; }) ? ' stopped' : '') + '" data-l="' + l + '" data-attempts="' + atts.join(' ') + '">' +
                '<title>' + esc(title) + '</title>' +
                '<line x1="' + (x - cw * 0.42) + '" x2="' + (x + cw * 0.42) + '" y1="' + y + '" y2="' + y + '"/>' +
                '<text x="' + (x + 8) + '" y="' + (y - 3) + '">↻ ' + esc(text) + '</text>';
        /* the error once: on the lifeline it names, else on the first one
         * the resume concerns (the others: a red boundary, the error in its
         * title) */
        stopped = stopped.filter(function (r) {
          var m = /^lifeline ([^:]+):/.exec(String(r.stopped.error));
          var named = m && M.lindex.has(m[1]) ? M.lindex.get(m[1]) : -1;
          if (r.l >= 0 || named === l) return true;
          if (named >= 0 && cols[named] >= 0) return false;
          for (var q = 0; q < l; q++) if (cols[q] >= 0) return false;
          return true;
        });
        stopped.forEach(function (r, j) {
          s += '<text class="errtext" x="' + (x - cw * 0.42) + '" y="' + (y + fs + 1 + j * (fs + 2)) + '">✖ ' +
               esc(trunc('attempt ' + (r.attempt - 1) + ' stopped: ' + r.stopped.error, 70)) + '</text>';
        });
        out.push(s + '</g>');
      }
    }
  }

  /* A selected decision's causal past: per lifeline, the events up to the
   * last one its owner had seen (the frontier), shaded. */
  function cutSvg(out, r0, r1, cw) {
    if (!past) return;
    for (var name in past) {
      var l = M.lindex.get(name), n = +past[name] || 0;
      if (l === undefined || cols[l] < 0 || n < 1) continue;
      var fe = M.byLife[l][n - 1];
      if (!fe || fe.row < 0) continue;
      var y2 = yOf(fe.row) + rowH() * 0.45;
      if (y2 < HEAD + r0 * rowH() - rowH()) continue;
      out.push('<rect class="cut" data-l="' + l + '" x="' + (cols[l] - cw * 0.45) + '" y="' + HEAD + '" width="' + (cw * 0.9) +
               '" height="' + (y2 - HEAD) + '"/>');
    }
  }

  function evSvg(ev, x, y, fs, cw) {
    var o = ev.o, cls = evClass(ev);
    var bw = cw * 0.8, bh = rowH() * 0.72;
    if (ev.kind === 'act') {
      var name = o.action == null ? 'local' : String(o.action);
      var txt = data.mode === 'workflow' ? (ev.label || o.label || name) : name;
      if (data.mode !== 'workflow' && o.writes && typeof o.writes === 'object') {
        var ks = Object.keys(o.writes);
        if (ks.length) txt = ks.join(', ') + ' = ' + name;
      }
      var kind = o.akind || (o.prompt || o.answer !== undefined && o.question === undefined ? 'llm' : o.question !== undefined ? 'human' : '');
      if (ev.retries && ev.retries.length || o.attempts > 1) cls += ' retried';
      if (kind) cls += ' ' + esc(kind);
      /* a tool call of a store operation: marked, its store named */
      if (typeof o.store === 'string') {
        cls += ' tool';
        txt = 'tool ' + txt;
      }
      var label = trunc(txt, Math.max(6, Math.floor(bw / (fs * 0.6))));
      if (o.attempts > 1) label = trunc(txt, Math.max(6, Math.floor(bw / (fs * 0.6)) - 4)) + ' ×' + o.attempts;
      return '<g class="' + cls + '" data-ev="' + ev.id + '"' + attAttr(ev) + '><rect x="' + (x - bw / 2) + '" y="' + (y - bh / 2) + '" width="' + bw + '" height="' + bh +
             '" rx="3"/><text text-anchor="middle" x="' + x + '" y="' + (y + fs / 3) + '">' + esc(label) + '</text></g>';
    }
    if (ev.kind === 'read' || ev.kind === 'commit' || ev.kind === 'abort') {
      /* a store operation's events: its reads, then its commit or abort
       * (an abort is followed by the next attempt: its retry) */
      var sl = ev.kind === 'read' ? 'read ' + String(o.cell)
             : ev.kind === 'commit' ? 'commit #' + String(o.txn)
             : 'abort (retry ' + ((+o.attempt || 0) + 1) + ')';
      return '<g class="store ' + cls + '" data-ev="' + ev.id + '"' + attAttr(ev) + '><rect x="' + (x - bw / 2) + '" y="' + (y - bh / 2) + '" width="' + bw + '" height="' + bh +
             '"/><text text-anchor="middle" x="' + x + '" y="' + (y + fs / 3) + '">' + esc(trunc(sl, Math.max(6, Math.floor(bw / (fs * 0.6))))) + '</text></g>';
    }
    if (ev.kind === 'choice') {
      var v = o.value === true ? 'true' : o.value === false ? 'false' : '';
      var d = rowH() * 0.38;
      var lab = String(o.construct) + (v ? ' → ' + v : '');
      return '<g class="' + cls + (o.value === false ? ' false' : '') + '" data-ev="' + ev.id + '"' + attAttr(ev) + '><path d="M' + (x - d * 1.6) + ' ' + y + ' L' + x + ' ' + (y - d) + ' L' + (x + d * 1.6) + ' ' + y + ' L' + x + ' ' + (y + d) + ' Z"/>' +
             '<text x="' + (x + d * 1.6 + 4) + '" y="' + (y + fs / 3) + '">' + esc(trunc(lab, 28)) + '</text></g>';
    }
    if (ev.kind === 'return' || ev.kind === 'skip') {
      return '<g class="act ' + cls + '" data-ev="' + ev.id + '"' + attAttr(ev) + '><rect x="' + (x - bw / 2) + '" y="' + (y - bh / 2) + '" width="' + bw + '" height="' + bh +
             '" rx="9"/><text text-anchor="middle" x="' + x + '" y="' + (y + fs / 3) + '">' + esc(trunc(ev.label || o.label || ev.kind, 30)) + '</text></g>';
    }
    if (ev.kind === 'send' || ev.kind === 'recv' || ev.kind === 'self') {
      if (ev.msg !== undefined && M.messages[ev.msg].ctl && !showCtl) return '';
      return '<g class="' + cls + '" data-ev="' + ev.id + '"' + attAttr(ev) + '><circle class="evdot" cx="' + x + '" cy="' + y + '" r="' + 2.5 * Math.max(zoom, 0.6) + '"/></g>';
    }
    /* an event of a kind this page does not know: still drawn */
    return '<g class="' + cls + '" data-ev="' + ev.id + '"' + attAttr(ev) + '><circle class="evdot" cx="' + x + '" cy="' + y + '" r="4"/><text x="' + (x + 6) + '" y="' + (y + fs / 3) + '">' + esc(trunc(ev.kind, 20)) + '</text></g>';
  }

  /* ---- details ------------------------------------------------------------ */

  function section(body, title, text) {
    var h = document.createElement('h3');
    h.textContent = title;
    var p = document.createElement('pre');
    p.textContent = text;
    body.appendChild(h);
    body.appendChild(p);
  }

  /* the guard of a construct, when the page has the workflow's guards
   * (zgc view --source FILE.zg) */
  function guardSections(body, tag) {
    var g = data.guards && Object.prototype.hasOwnProperty.call(data.guards, tag) ? data.guards[tag] : null;
    if (!g || typeof g !== 'object') return;
    section(body, 'guard (owner ' + String(g.owner) + (g.line ? ', line ' + g.line : '') + ')', String(g.guard));
    if (g.cpl) section(body, 'CPL, unfolded', String(g.cpl));
  }

  function pretty(v) {
    return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
  }

  /* What a decision's owner had causally seen of every other lifeline (its
   * clock): the last visible event and that lifeline's variables then,
   * which is what @B(φ) and @B.x of a CPL guard read; marked in the chart. */
  function seenSections(body, ev) {
    var vc = ev.o.vc;
    if (!vc || typeof vc !== 'object') return;
    past = vc;
    for (var name in vc) {
      var l = M.lindex.get(name);
      if (l === undefined || l === ev.l) continue;
      var n = +vc[name] || 0, text;
      if (n === 0) {
        text = 'nothing of ' + name + ' (no event of it in the causal past)';
      } else {
        var last = M.byLife[l][n - 1];
        var st = M.storeAt(l, n);
        text = 'its events 1–' + n + '; the last: ' + (last ? last.kind + (last.o.action ? ' ' + last.o.action : '') +
               (last.o.to ? ' → ' + last.o.to : last.o.from ? ' ← ' + last.o.from : '') : '?') + '\n' +
               Object.keys(st).map(function (k) { return k + ' = ' + JSON.stringify(st[k]); }).join('\n');
      }
      section(body, 'seen of ' + name, text);
    }
  }

  /* What a CPL guard's variables read in its owner's view (the guard's
   * "reads", viewer/workflow.c): the evaluation lifeline of a term is the
   * owner, or B inside @B(…), whose event is the last one of B the view
   * before it had seen (the vc of that event); @B.x and an unqualified x
   * read the store of the last B event visible there (B's own event when B
   * evaluates: at the decision itself, the store before it).  Under prev,
   * the evaluation lifeline's previous event; under since (once, past,
   * historically), the values over its events 1 to now. */
  function storeBefore(l, k) {
    /* the valuation at event k of l: its store after it, before it at a choice */
    var e = M.byLife[l][k - 1];
    return M.storeAt(l, e && e.kind === 'choice' ? k - 1 : k);
  }
  function termValue(cur, life, v) {
    /* cur = {l, k, vc}: the evaluation lifeline's event */
    var l = M.lindex.get(life);
    if (l === undefined) return { none: 'no lifeline ' + life };
    var k = l === cur.l ? cur.k : +(cur.vc && cur.vc[life]) || 0;
    if (k < 1) return { none: 'no event of ' + life + ' is visible' };
    var st = storeBefore(l, k);
    if (!Object.prototype.hasOwnProperty.call(st, v)) return { none: 'no value', k: k };
    return { v: st[v], k: k };
  }
  function viewOf(ev, path) {
    var cur = { l: ev.l, k: ev.idx, vc: ev.o.vc };
    for (var i = 1; i < path.length; i++) {
      var l = M.lindex.get(String(path[i]));
      if (l === undefined) return null;
      if (l === cur.l) continue;
      var k = +(cur.vc && cur.vc[path[i]]) || 0;
      var e = k > 0 ? M.byLife[l][k - 1] : null;
      if (!e) return { none: 'no event of ' + path[i] + ' is visible' };
      cur = { l: l, k: k, vc: e.o.vc };
    }
    return cur;
  }
  function valText(r) {
    return r.none ? '(' + r.none + ')' : JSON.stringify(r.v);
  }
  function readSections(body, ev, tag) {
    var g = data.guards && Object.prototype.hasOwnProperty.call(data.guards, tag) ? data.guards[tag] : null;
    if (!g || !g.reads || !Array.isArray(g.reads.list)) return;
    var rows = [];
    g.reads.list.forEach(function (t) {
      var path = Array.isArray(t.path) ? t.path : [];
      var where = path.slice(1).map(function (p) { return '@' + p; }).join(' ');
      var head = String(t.term) + (where ? '  in ' + where + '(…)' : '') + (t.past ? '  under ' + t.past : '');
      if (t.deep) { rows.push({ t: t, text: head + ': not shown (an @ under a past operator, or past operators nested)' }); return; }
      var cur = viewOf(ev, path);
      if (!cur || cur.none) { rows.push({ t: t, text: head + ': ' + (cur ? '(' + cur.none + ')' : '(?)') }); return; }
      var who = M.lifelines[cur.l];
      if (!t.past) {
        var r = termValue(cur, String(t.life), String(t.var));
        var at = r.k && M.byLife[M.lindex.get(String(t.life))][r.k - 1];
        rows.push({ t: t, value: r, text: head + ' = ' + valText(r) +
                    (r.k ? '   (' + t.life + ' event ' + r.k + (at && at.kind === 'choice' ? ': the store before it' : '') + ')' : '') });
      } else if (t.past === 'prev') {
        var pe = cur.k > 1 ? M.byLife[cur.l][cur.k - 2] : null;
        var pr = pe ? termValue({ l: cur.l, k: cur.k - 1, vc: pe.o.vc }, String(t.life), String(t.var)) : { none: 'no previous event: prev is false' };
        rows.push({ t: t, value: pr, text: head + ' = ' + valText(pr) + '   (at ' + who + ' event ' + (cur.k - 1) + ')' });
      } else {
        /* the values over the evaluation lifeline's events 1..k, runs of equal ones */
        var runs = [];
        for (var j = 1; j <= cur.k; j++) {
          var e = M.byLife[cur.l][j - 1];
          var rv = valText(termValue({ l: cur.l, k: j, vc: e ? e.o.vc : null }, String(t.life), String(t.var)));
          var last = runs[runs.length - 1];
          if (last && last.v === rv) last.to = j; else runs.push({ v: rv, from: j, to: j });
        }
        rows.push({ t: t, text: head + ', over ' + who + ' events 1–' + cur.k + ': ' +
                    runs.map(function (x) { return x.v + ' (' + (x.from === x.to ? x.from : x.from + '–' + x.to) + ')'; }).join(', ') });
      }
    });
    if (!rows.length) return;
    var h = document.createElement('h3');
    h.textContent = 'what the guard read in this view';
    var ul = document.createElement('ul');
    ul.className = 'reads';
    rows.forEach(function (r) {
      var li = document.createElement('li');
      li.textContent = r.text;
      li.setAttribute('data-term', String(r.t.term));
      if (r.value && !r.value.none) li.setAttribute('data-value', JSON.stringify(r.value.v));
      ul.appendChild(li);
    });
    if (g.reads.more) {
      var li = document.createElement('li');
      li.textContent = '… (more terms than shown)';
      ul.appendChild(li);
    }
    body.appendChild(h);
    body.appendChild(ul);
  }

  function showDetails(sel) {
    selected = sel;
    past = null;
    var body = $('details-body');
    body.textContent = '';
    var h = document.createElement('h2');
    body.appendChild(h);
    if (sel.type === 'msg') {
      var m = M.messages[sel.i];
      h.textContent = (m.ctl ? 'control message ' : 'message ') + M.lifelines[m.from] + ' → ' + M.lifelines[m.to];
      var so = m.send.o;
      if (data.mode === 'workflow') {
        section(body, 'statement', String(so.label || ''));
        if (so.control) section(body, 'control', String(so.control));
        if (so.line) section(body, 'source line', String(so.line));
      } else {
        section(body, 'channel', String(so.channel));
        if (so.control != null) {
          section(body, 'decision of', String(so.control));
          guardSections(body, so.control);
        }
        section(body, 'values', (Array.isArray(so.values) ? so.values : []).map(pretty).join('\n'));
        section(body, 'message', m.id + (m.recv ? '' : '  (not received)'));
        section(body, 'send', JSON.stringify(so));
        if (m.recv) section(body, 'receive', JSON.stringify(m.recv.o));
      }
    } else {
      var ev = data.mode === 'workflow' ? M.events[sel.i] : M.byId[sel.i], o = ev.o;
      h.textContent = M.lifelines[ev.l] + ': ' + (ev.kind === 'act' ? (o.action == null ? 'local computation' : (typeof o.store === 'string' ? 'tool call ' : 'action ') + o.action)
                      : ev.kind === 'choice' ? 'decision ' + o.construct
                      : ev.kind === 'read' ? 'read ' + o.store + '.' + o.cell
                      : ev.kind === 'commit' || ev.kind === 'abort' ? ev.kind + ' #' + o.txn + ' of ' + o.store : ev.kind) +
                      (o.index !== undefined ? '  (event ' + o.index + ')' : '');
      if (data.mode === 'workflow') {
        ['label', 'akind', 'action', 'line'].forEach(function (f) { if (o[f] !== undefined && o[f] !== null) section(body, f === 'akind' ? 'kind' : f, String(o[f])); });
      } else {
        if (ev.kind === 'choice') {
          section(body, 'decision', String(o.construct) + ' = ' + jtext(o.value));
          guardSections(body, o.construct);
          readSections(body, ev, o.construct);
          seenSections(body, ev);
        }
        if (o.question !== undefined) section(body, 'question', pretty(o.question));
        if (o.prompt !== undefined) {
          if (o.prompt && typeof o.prompt === 'object') {
            if (o.prompt.system !== undefined) section(body, 'system prompt', pretty(o.prompt.system));
            if (o.prompt.user !== undefined) section(body, 'user prompt', pretty(o.prompt.user));
          } else section(body, 'prompt', pretty(o.prompt));
        }
        if (o.answer !== undefined) section(body, o.question !== undefined ? 'answer' : 'raw answer', pretty(o.answer));
        if (ev.kind === 'act' && o.attempts !== undefined) section(body, 'attempts', String(o.attempts));
        if (ev.kind === 'read') {
          if (o.value !== undefined) section(body, 'value read', pretty(o.value));
          section(body, 'version', o.version === 0 ? '0 (the default)' : 'commit #' + String(o.version));
        }
        if (ev.kind === 'commit' && o.cells && typeof o.cells === 'object')
          section(body, 'cells committed', Object.keys(o.cells).map(function (k) { return k + ' = ' + pretty(o.cells[k]); }).join('\n'));
        if (ev.kind === 'commit' && Array.isArray(o.registry)) section(body, 'tools', o.registry.map(String).join(', ') || '(none)');
        if (ev.kind === 'abort' && o.reason !== undefined) section(body, 'reason', pretty(o.reason));
        if (ev.kind === 'read' || ev.kind === 'commit' || ev.kind === 'abort') section(body, 'operation attempt', String(o.attempt));
        if (ev.kind === 'act' && typeof o.store === 'string') section(body, 'tool of store', o.store);
        (ev.retries || []).forEach(function (r) {
          section(body, 'failed attempt ' + r.attempt, String(r.error) + (r.delay ? '\n(retried after ' + r.delay + ' s)' : ''));
        });
        if (o.writes && typeof o.writes === 'object') {
          var ks = Object.keys(o.writes);
          if (ks.length) section(body, ev.kind === 'act' ? 'output' : 'writes', ks.map(function (k) { return k + ' = ' + pretty(o.writes[k]); }).join('\n'));
        }
        if (typeof o.run_attempt === 'number') section(body, 'run attempt', String(o.run_attempt));
        if (o.vc) section(body, 'vector clock', Object.keys(o.vc).map(function (k) { return k + ': ' + o.vc[k]; }).join('   '));
        section(body, 'trace line', JSON.stringify(o));
      }
    }
    $('details').hidden = false;
    requestDraw();
  }

  /* ---- interaction --------------------------------------------------------- */

  chart.addEventListener('scroll', requestDraw, { passive: true });
  window.addEventListener('resize', function () { sizeAll(); requestDraw(); });

  svg.addEventListener('click', function (e) {
    var g = e.target.closest('[data-ev],[data-i]');
    if (!g) return;
    if (g.hasAttribute('data-ev')) showDetails({ type: 'ev', i: +g.getAttribute('data-ev') });
    else showDetails({ type: 'msg', i: +g.getAttribute('data-i') });
  });
  $('details-close').addEventListener('click', function () {
    $('details').hidden = true;
    selected = null;
    past = null;
    requestDraw();
  });

  /* pan by dragging the background */
  var pan = null;
  chart.addEventListener('mousedown', function (e) {
    if (e.button !== 0 || e.target.closest('[data-ev],[data-i]')) return;
    pan = { x: e.clientX, y: e.clientY, l: chart.scrollLeft, t: chart.scrollTop };
    chart.classList.add('panning');
  });
  window.addEventListener('mousemove', function (e) {
    if (!pan) return;
    chart.scrollLeft = pan.l - (e.clientX - pan.x);
    chart.scrollTop = pan.t - (e.clientY - pan.y);
  });
  window.addEventListener('mouseup', function () {
    pan = null;
    chart.classList.remove('panning');
  });

  function setZoom(z, anchorRow) {
    z = Math.max(0.15, Math.min(3, z));
    if (anchorRow === undefined) anchorRow = (chart.scrollTop + chart.clientHeight / 2 - HEAD) / rowH();
    zoom = z;
    sizeAll();
    chart.scrollTop = HEAD + anchorRow * rowH() - chart.clientHeight / 2;
    requestDraw();
  }
  chart.addEventListener('wheel', function (e) {
    if (!e.ctrlKey) return;
    e.preventDefault();
    setZoom(zoom * (e.deltaY < 0 ? 1.15 : 1 / 1.15));
  }, { passive: false });
  $('zoom-in').addEventListener('click', function () { setZoom(zoom * 1.25); });
  $('zoom-out').addEventListener('click', function () { setZoom(zoom / 1.25); });
  $('zoom-fit').addEventListener('click', function () {
    var n = cols.filter(function (x) { return x >= 0; }).length || 1;
    setZoom((chart.clientWidth - 2 * MARGIN) / (n * BASE_COL));
  });

  $('show-ctl').addEventListener('change', function (e) { showCtl = e.target.checked; requestDraw(); });
  $('filter-list').addEventListener('change', function (e) {
    var l = +e.target.getAttribute('data-l');
    if (e.target.checked) hidden.delete(l); else hidden.add(l);
    sizeAll();
    requestDraw();
  });

  function evText(ev) {
    if (ev.text === undefined) ev.text = (M.lifelines[ev.l] + ' ' + JSON.stringify(ev.o)).toLowerCase();
    return ev.text;
  }
  function scrollToRow(r) {
    chart.scrollTop = Math.max(0, HEAD + r * rowH() - chart.clientHeight / 2);
    requestDraw();
  }
  $('search').addEventListener('keydown', function (e) {
    if (e.key !== 'Enter') return;
    var q = e.target.value.trim().toLowerCase();
    if (!q) { hits = []; hitSet = new Set(); $('found').textContent = ''; requestDraw(); return; }
    if (q !== hits.q) {
      hits = [];
      for (var i = 0; i < M.events.length; i++) if (evText(M.events[i]).indexOf(q) >= 0) hits.push(i);
      hits.sort(function (a, b) { return M.events[a].row - M.events[b].row; });
      hits.q = q;
      hitSet = new Set(hits.map(function (i) { return M.events[i].id; }));
      hitPos = -1;
    }
    if (!hits.length) { $('found').textContent = 'none'; requestDraw(); return; }
    hitPos = (hitPos + 1) % hits.length;
    var ev = M.events[hits[hitPos]];
    $('found').textContent = (hitPos + 1) + ' of ' + hits.length;
    scrollToRow(ev.row);
    showDetails({ type: 'ev', i: ev.id });
  });

  function status() {
    var s = data.mode === 'workflow'
      ? M.lifelines.length + ' lifelines, ' + M.messages.length + ' messages'
      : M.events.length + ' events, ' + M.messages.length + ' messages, ' + M.lifelines.length + ' lifelines';
    var el = $('status');
    el.className = '';
    if (M.error) {
      s += ' · error: ' + M.error;
      el.className = 'error';
    } else if (M.result !== undefined) {
      s += ' · result: ' + trunc(JSON.stringify(M.result), 60);
    } else if (data.mode === 'live') {
      s += M.ended ? ' · ended' : live.state === 'open' ? ' · live' : ' · ' + live.state;
    } else if (data.mode === 'trace') {
      s += ' · no end line (the run did not finish)';
    }
    if (M.note) s += ' · ' + M.note;
    var waiting = M.nevents - M.events.length;
    if (waiting > 0 && M.ended) s += ' · ' + waiting + ' events without their cause';
    el.textContent = s;
    el.title = s;
  }

  /* ---- live runs ------------------------------------------------------------ */

  var live = { state: 'closed' };
  function startLive() {
    live.state = 'connecting';
    var es = new EventSource('events');
    live.es = es;
    var lastRows = -1, lastLifelines = -1, queued = false;
    function refresh() {
      queued = false;
      var follow = chart.scrollTop + chart.clientHeight >= HEAD + (lastRows + 1) * rowH() - 2;
      sizeAll();
      if (follow && M.nrows !== lastRows) chart.scrollTop = HEAD + (M.nrows + 2) * rowH();
      lastRows = M.nrows;
      lastLifelines = M.lifelines.length;
      status();
      requestDraw();
    }
    es.onopen = function () { live.state = 'open'; status(); };
    es.onmessage = function (e) {
      var o;
      try { o = JSON.parse(e.data); } catch (err) { console.error('zgc view: a line that is not JSON'); return; }
      M.addLine(o);
      if (o && o.kind === 'end') {
        es.close();
        live.state = 'ended';
      }
      if (!queued) { queued = true; setTimeout(refresh, 50); }
    };
    es.onerror = function () {
      if (M.ended) return;
      /* the run ended or the connection broke: EventSource retries */
      live.state = es.readyState === 2 ? 'disconnected' : 'reconnecting';
      status();
    };
  }

  sizeAll();
  status();
  draw();
  if (data.mode === 'live') startLive();

  window.zgView = {
    mode: data.mode,
    model: M,
    modelMs: modelMs,
    readyMs: performance.now(), /* since the navigation started */
    ready: true,
    rows: function () { return M.nrows; },
    counts: function () {
      return { events: M.events.length, taken: M.nevents, messages: M.messages.length, sends: M.nsends,
               lifelines: M.lifelines.slice(), rows: M.nrows, ended: M.ended, error: M.error,
               lines: M.lines };
    },
    scrollToRow: scrollToRow,
    rowHeight: rowH,
    select: showDetails
  };
})();
