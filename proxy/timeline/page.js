"use strict";
(function () {
  const tStart = performance.now();
  const D = JSON.parse(document.getElementById("data").textContent);
  const tParsed = performance.now();
  const S = D.strings, E = D.events, F = D.faults;
  const FATES = ["delivered", "dropped", "lost", "cut", "stalled", "undelivered"];
  const PRIMING = 1, DUP = 2, HASID = 4, MODIFIED = 8, FAULT = 16, CORRUPT = 32, DISPATCHED = 64, RESPONSE = 128, ERROR = 256;
  // A row: a band for the fault labels on top, the fault triangles below
  // it, then the marks around the lane's line.
  const ROW = 24, BAND = 11, TRI = 10, MID = 18, MH = 5;
  const AXIS = 36, RUNSTRIP = 16, LABEL_W = 260, PAD = 12, GAP = 6, FONT = "10px system-ui, sans-serif";
  const C = {
    delivered: "#33475b", priming: "#2f80c4", bad: "#c62828", dup: "#e07b00", link: "#1565c0",
    response: "#2e7d32", error: "#7b1fa2", end: "#7b8794", run: "#5f6b7a", later: "#2e7d32",
    finding: "#fdecea", selected: "#f9c9c4",
  };
  const LANE_C = { post: "#b0bac6", get: "#8cc084", resume: "#7fb0e0", legacy: "#c39bd3", other: "#d0d4da" };
  const CUT_CAUSES = new Set(["fault-closed", "fault-reset", "fault-answered", "upstream-failed"]);

  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e; };
  const fmtT = (us) => {
    const a = Math.abs(us);
    if (a >= 1e6) return (us / 1e6).toFixed(a >= 1e8 ? 0 : 3).replace(/\.?0+$/, "") + "s";
    if (a >= 1e3) return (us / 1e3).toFixed(1).replace(/\.0$/, "") + "ms";
    return Math.round(us) + "µs";
  };

  // Rows: a header row per session, then its lanes.
  const rows = [];          // >= 0: lane index; < 0: -(session index) - 1
  const laneRow = new Int32Array(D.lanes.length);
  D.sessions.forEach((s, si) => {
    rows.push(-si - 1);
    for (const li of s.lanes) { laneRow[li] = rows.length; rows.push(li); }
  });
  const laneByEx = new Map();
  D.lanes.forEach((l, i) => laneByEx.set(l.ex, i));
  const perLane = (list, lane) => { const a = D.lanes.map(() => []); list.forEach((v, i) => a[lane(v, i)].push(i)); return a; };

  // Faults per lane, in time order; unanswered requests, retry windows
  // and links per lane.
  const laneFaults = perLane(F.lane, (v) => v);
  for (const a of laneFaults) a.sort((x, y) => F.t[x] - F.t[y]);
  const laneUnanswered = perLane(D.unanswered, (u) => u.lane);
  const laneWindows = perLane(D.windows, (w) => w.lane);
  const laneLinks = perLane(D.links, (k) => k.lane);

  // Findings: the lanes and the event ids they are about.
  const findingLanes = new Set();
  const findingIDs = new Set();
  for (const f of D.findings) {
    for (const ex of [f.ex].concat(f.related || [])) if (ex && laneByEx.has(ex)) findingLanes.add(laneByEx.get(ex));
    for (const id of f.event_ids || []) findingIDs.add(id);
  }
  let selected = null; // the selected finding's lanes

  let tEnd = D.end_us;
  for (const l of D.lanes) tEnd = Math.max(tEnd, l.end);
  tEnd = Math.max(tEnd, 1);

  const scroller = $("scroller"), stage = $("stage"), canvas = $("canvas"), labels = $("labels"), tip = $("tip");
  const overlay = $("overlay"), runLabels = $("run-labels");
  const ctx = canvas.getContext("2d");
  let W = 0, H = 0, t0 = 0, scale = 1; // scale: px per µs
  const contentH = AXIS + rows.length * ROW + PAD;

  // The drawing is as tall as its content, up to the window's height.
  function resize() {
    const avail = Math.max(240, window.innerHeight - 8);
    H = Math.min(contentH, avail);
    scroller.style.height = H + "px"; stage.style.height = H + "px";
    W = stage.clientWidth;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.max(1, Math.floor(W * dpr)); canvas.height = Math.max(1, Math.floor(H * dpr));
    canvas.style.width = W + "px"; canvas.style.height = H + "px";
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    $("spacer").style.height = Math.max(0, contentH - H) + "px";
    for (const [o, top, h] of [[overlay, AXIS, H - AXIS], [runLabels, 0, AXIS]]) {
      o.style.left = LABEL_W + "px"; o.style.top = top + "px"; o.style.width = Math.max(0, W - LABEL_W) + "px"; o.style.height = h + "px";
    }
  }
  // fit shows the whole run, from its first exchange, with a margin.
  let tFirst = tEnd;
  for (const l of D.lanes) tFirst = Math.min(tFirst, l.start);
  function fit() {
    const span = Math.max(tEnd - tFirst, 1);
    scale = Math.max(1e-9, (W - LABEL_W - 24 - 150) / span);
    t0 = tFirst - 12 / scale;
  }
  const x = (t) => LABEL_W + (t - t0) * scale;
  const tAt = (px) => t0 + (px - LABEL_W) / scale;
  const firstRow = () => Math.floor(scroller.scrollTop / ROW);
  const rowY = (r) => AXIS + r * ROW - scroller.scrollTop;

  // lowerBound returns the first event of lane li at or after t.
  function lowerBound(li, t) {
    const l = D.lanes[li];
    let lo = l.first, hi = l.first + l.n;
    while (lo < hi) { const m = (lo + hi) >> 1; if (E.t[m] < t) lo = m + 1; else hi = m; }
    return lo;
  }

  // The marks. The legend draws its swatches with these same functions.
  function eventColour(fate, fl) {
    if (fate !== 0) return C.bad;
    if (fl & RESPONSE) return (fl & ERROR) ? C.error : C.response;
    return (fl & DUP) ? C.dup : (fl & PRIMING) ? C.priming : C.delivered;
  }
  function markEvent(g, px, y, fate, fl) {
    const c = eventColour(fate, fl), mid = y + MID;
    g.fillStyle = c;
    if (fl & RESPONSE) {
      g.beginPath(); g.arc(px, mid, 4.5, 0, 2 * Math.PI); g.fill();
      if (fate !== 0) { g.fillStyle = "#fff"; g.beginPath(); g.arc(px, mid, 1.8, 0, 2 * Math.PI); g.fill(); }
    } else if (fate !== 0) g.fillRect(px - 1.5, mid - MH - 2, 3, 2 * MH + 4);
    else g.fillRect(px - 1, mid - MH, 2, 2 * MH);
    if (fl & DUP) { g.fillStyle = C.dup; g.fillRect(px + 3, mid - MH, 2, 2 * MH); }
  }
  function markRing(g, px, y) {
    g.strokeStyle = C.bad; g.lineWidth = 1.5; g.beginPath(); g.arc(px, y + MID, 7, 0, 2 * Math.PI); g.stroke(); g.lineWidth = 1;
  }
  function markFault(g, px, y) {
    g.fillStyle = C.bad; g.beginPath(); g.moveTo(px - 4, y + TRI - 1); g.lineTo(px + 4, y + TRI - 1); g.lineTo(px, y + TRI + 5); g.fill();
  }
  function markLane(g, xa, xb, y, stream) {
    g.fillStyle = LANE_C[stream] || LANE_C.other; g.fillRect(xa, y + MID - 1, Math.max(1, xb - xa), 2);
  }
  function markEnd(g, px, y, cause) {
    const cut = CUT_CAUSES.has(cause);
    g.fillStyle = cut ? C.bad : C.end;
    if (cut) g.fillRect(px - 1.5, y + MID - 8, 3, 16); else g.fillRect(px - 0.5, y + MID - 6, 1.5, 12);
  }
  let hatch = null;
  function markWindow(g, xa, xb, y) {
    if (!hatch) {
      const p = document.createElement("canvas"); p.width = p.height = 6;
      const pc = p.getContext("2d");
      pc.fillStyle = "rgba(21,101,192,0.08)"; pc.fillRect(0, 0, 6, 6);
      pc.strokeStyle = "rgba(21,101,192,0.35)"; pc.beginPath(); pc.moveTo(0, 6); pc.lineTo(6, 0); pc.stroke();
      hatch = g.createPattern(p, "repeat");
    }
    g.fillStyle = hatch; g.fillRect(xa, y + BAND, Math.max(1, xb - xa), ROW - BAND - 1);
    g.fillStyle = "rgba(21,101,192,0.55)"; g.fillRect(xb - 1, y + BAND, 1, ROW - BAND - 1);
  }
  function markReconnect(g, px, y, early) {
    g.fillStyle = early ? C.bad : C.later;
    g.fillRect(px - 1, y + BAND, 2, ROW - BAND - 1);
    g.beginPath(); g.moveTo(px + 1, y + MID); g.lineTo(px + 6, y + MID - 4); g.lineTo(px + 6, y + MID + 4); g.fill();
  }
  function markLink(g, xa, ya, xb, yb) {
    g.strokeStyle = C.link; g.fillStyle = C.link; g.lineWidth = 1.2;
    const bend = Math.min(60, Math.abs(ya - yb) / 2 + 10);
    g.beginPath(); g.moveTo(xa, ya);
    g.bezierCurveTo(xa - bend, ya, xb + bend, yb, xb + 3, yb);
    g.stroke();
    g.beginPath(); g.moveTo(xb + 2, yb); g.lineTo(xb + 8, yb - 3); g.lineTo(xb + 8, yb + 3); g.fill();
    g.lineWidth = 1;
  }
  function markRun(g, px, y0, y1) {
    g.strokeStyle = C.run; g.lineWidth = 1.5; g.setLineDash([5, 3]);
    g.beginPath(); g.moveTo(Math.round(px) + 0.5, y0); g.lineTo(Math.round(px) + 0.5, y1); g.stroke();
    g.setLineDash([]); g.lineWidth = 1;
  }

  // What the last frame drew, counted as it is drawn; kept on the canvas
  // so that a test can read it from the DOM.
  let drawn = null;
  const count = (k) => { drawn[k] = (drawn[k] || 0) + 1; };

  function drawAxis() {
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, AXIS);
    ctx.strokeStyle = "#d8dde4"; ctx.beginPath(); ctx.moveTo(0, AXIS - 0.5); ctx.lineTo(W, AXIS - 0.5); ctx.stroke();
    const span = (W - LABEL_W) / scale;
    const raw = Math.max(span / 8, 1), pow = Math.pow(10, Math.floor(Math.log10(raw)));
    let step = pow * 10;
    for (const m of [1, 2, 5]) if (pow * m >= raw) { step = pow * m; break; }
    ctx.fillStyle = "#5f6b7a"; ctx.font = "11px system-ui, sans-serif"; ctx.textBaseline = "middle";
    ctx.strokeStyle = "#eef1f5";
    for (let t = Math.ceil(t0 / step) * step; x(t) < W; t += step) {
      const px = Math.round(x(t)) + 0.5;
      if (px < LABEL_W) continue;
      ctx.beginPath(); ctx.moveTo(px, RUNSTRIP); ctx.lineTo(px, H); ctx.stroke();
      ctx.fillText(fmtT(t), px + 3, RUNSTRIP + (AXIS - RUNSTRIP) / 2);
    }
  }

  function drawLane(li, y) {
    const l = D.lanes[li];
    const sel = selected && selected.has(li);
    if (sel || findingLanes.has(li)) { ctx.fillStyle = sel ? C.selected : C.finding; ctx.fillRect(LABEL_W, y, W - LABEL_W, ROW); }
    for (const wi of laneWindows[li]) {
      const w = D.windows[wi], xa = x(w.from), xb = x(w.to);
      if (xb < LABEL_W || xa > W) continue;
      markWindow(ctx, xa, xb, y); count("windows");
      if (w.reconnect >= 0) { markReconnect(ctx, x(w.reconnect_t), y, w.early); count(w.early ? "early" : "reconnects"); }
    }
    const xa = Math.max(LABEL_W, x(l.start)), xb = Math.min(W, x(l.end));
    if (xb >= LABEL_W && xa <= W) {
      markLane(ctx, xa, xb, y, l.stream); count("lane-" + l.stream);
      if (l.ended && x(l.end) <= W && x(l.end) >= LABEL_W) { markEnd(ctx, x(l.end), y, l.cause); count(CUT_CAUSES.has(l.cause) ? "cuts" : "ends"); }
      if (l.answers && l.ended) { markEvent(ctx, x(l.end), y, 0, RESPONSE); count("responses"); }
    }
    // Events in view; marks closer than a pixel to the previous one of the
    // same colour are skipped, so a dense lane costs no more than its width.
    const tmin = tAt(LABEL_W - 8), tmax = tAt(W + 8);
    let lastX = -1e9, lastC = "";
    const end = l.first + l.n;
    for (let i = lowerBound(li, tmin); i < end && E.t[i] <= tmax; i++) {
      const fl = E.flags[i], fate = E.fate[i];
      const c = eventColour(fate, fl);
      const px = x(E.t[i]);
      if (px - lastX < 1 && c === lastC && !(fl & RESPONSE)) continue;
      lastX = px; lastC = c;
      markEvent(ctx, px, y, fate, fl);
      count((fl & RESPONSE) ? "responses" : fate !== 0 ? "bad" : (fl & PRIMING) ? "priming" : "events");
      if (fl & DUP) count("dup");
      if (findingIDs.size && E.id[i] >= 0 && findingIDs.has(S[E.id[i]]) && findingLanes.has(li)) { markRing(ctx, px, y); count("rings"); }
    }
    for (const fi of laneFaults[li]) {
      const px = x(F.t[fi]);
      if (px < LABEL_W - 4 || px > W + 4) continue;
      markFault(ctx, px, y); count("faults");
    }
  }

  function drawLinks(r0, r1) {
    for (const k of D.links) {
      if (k.event < 0) continue;
      const ra = laneRow[k.lane], rb = laneRow[E.lane[k.event]];
      if (Math.max(ra, rb) < r0 || Math.min(ra, rb) > r1) continue;
      const xa = x(k.t), ya = rowY(ra) + MID, xb = x(E.t[k.event]), yb = rowY(rb) + MID;
      if (Math.max(xa, xb) < LABEL_W || Math.min(xa, xb) > W) continue;
      markLink(ctx, xa, ya, xb, yb); count("links");
    }
  }

  function drawRun() {
    for (const r of D.run) {
      const px = x(r.t);
      if (px < LABEL_W || px > W) continue;
      markRun(ctx, px, RUNSTRIP - 2, H); count("run");
    }
  }

  function draw() {
    drawn = {};
    ctx.clearRect(0, 0, W, H);
    const r0 = firstRow(), r1 = Math.min(rows.length - 1, r0 + Math.ceil((H - AXIS) / ROW));
    for (let r = r0; r <= r1; r++) {
      const y = rowY(r), li = rows[r];
      if (li < 0) { ctx.fillStyle = "#eef1f5"; ctx.fillRect(0, y, W, ROW); continue; }
      if (r % 2) { ctx.fillStyle = "#f6f7f9"; ctx.fillRect(0, y, W, ROW); }
    }
    drawAxis();
    ctx.save(); ctx.beginPath(); ctx.rect(LABEL_W, AXIS, W - LABEL_W, H - AXIS); ctx.clip();
    for (let r = r0; r <= r1; r++) if (rows[r] >= 0) drawLane(rows[r], rowY(r));
    drawLinks(r0, r1);
    ctx.restore();
    ctx.save(); ctx.beginPath(); ctx.rect(LABEL_W, 0, W - LABEL_W, H); ctx.clip(); drawRun(); ctx.restore();
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, LABEL_W, AXIS);
    ctx.strokeStyle = "#d8dde4"; ctx.beginPath(); ctx.moveTo(LABEL_W - 0.5, 0); ctx.lineTo(LABEL_W - 0.5, H); ctx.stroke();
    drawLabels(r0, r1);
    drawOverlay(r0, r1);
    for (const k of Object.keys(canvas.dataset)) if (k.startsWith("drawn")) delete canvas.dataset[k];
    const camel = (k) => "drawn" + k.split("-").map((p) => p[0].toUpperCase() + p.slice(1)).join("");
    for (const [k, v] of Object.entries(drawn)) canvas.dataset[camel(k)] = v;
  }

  // Only the labels in view are DOM nodes.
  function drawLabels(r0, r1) {
    const frag = document.createDocumentFragment();
    for (let r = r0; r <= r1; r++) {
      const li = rows[r], y = rowY(r);
      let d;
      if (li < 0) {
        const s = D.sessions[-li - 1];
        d = el("div", "session-label", s.label + " · " + s.lanes.length + " exchanges");
      } else {
        const l = D.lanes[li];
        d = el("div", "lane-label" + (findingLanes.has(li) ? " finding-lane" : ""), "#" + l.ex + " " + (l.label || l.stream));
        d.dataset.ex = l.ex;
        d.title = laneText(li);
      }
      d.style.top = y + "px"; d.style.height = ROW + "px"; d.style.lineHeight = ROW + "px";
      frag.appendChild(d);
      if (li >= 0 && laneUnanswered[li].length) {
        // A pill at the label's right end says so where one reads the lanes.
        d.style.width = (LABEL_W - 84) + "px";
        const p = el("div", "lane-pill", "no response");
        p.dataset.ex = D.lanes[li].ex;
        p.title = laneUnanswered[li].map((ui) => unansweredText(D.unanswered[ui])).join("\n\n");
        p.style.top = (y + (ROW - 14) / 2) + "px";
        frag.appendChild(p);
      }
    }
    labels.replaceChildren(frag);
  }

  // Text labels never overlap: each row's band holds the fault labels,
  // placed left to right, a label that would touch the one before it
  // merged into it; the Last-Event-ID labels then take the room left.
  // Labels are measured in the font page.css gives them (bold: 600).
  const measure = new Map();
  function textW(s, bold) {
    const key = (bold ? "b" : "n") + s;
    let w = measure.get(key);
    if (w == null) {
      ctx.font = (bold ? "600 " : "") + FONT; w = Math.ceil(ctx.measureText(s).width) + 6;
      if (measure.size < 5000) measure.set(key, w);
    }
    return w;
  }
  function faultSummary(fis) {
    const kinds = new Map();
    for (const fi of fis) { const k = S[F.kind[fi]]; kinds.set(k, (kinds.get(k) || 0) + 1); }
    const parts = [];
    for (const [k, n] of kinds) parts.push(n > 1 ? k + " ×" + n : k);
    const sameEvent = fis.length > 1 && fis.every((fi) => F.t[fi] === F.t[fis[0]]);
    return parts.join(sameEvent ? " + " : " · ");
  }
  function faultText(fi) {
    const li = F.lane[fi], ev = F.event[fi];
    const on = ev >= 0 ? "event " + E.index[ev] + " of exchange " + D.lanes[li].ex : "exchange " + D.lanes[li].ex;
    return "fault " + F.index[fi] + " of the profile (" + S[F.kind[fi]] + "), on " + on + " at " + fmtT(F.t[fi]) + ":\n  " + S[F.effect[fi]];
  }
  function faultsText(fis) {
    const lines = fis.slice(0, 10).map(faultText);
    if (fis.length > 10) lines.push("… and " + (fis.length - 10) + " more");
    return lines.join("\n");
  }
  function placeFaults(li, y, frag, placed) {
    const clusters = [];
    for (const fi of laneFaults[li]) {
      const px = x(F.t[fi]);
      if (px < LABEL_W - 4 || px > W + 4) continue;
      const last = clusters[clusters.length - 1];
      if (last && (px + 5 < last.right + GAP || Math.abs(px - last.px) < 1)) {
        last.faults.push(fi); last.text = faultSummary(last.faults); last.right = last.left + textW(last.text, true);
        continue;
      }
      const text = faultSummary([fi]);
      clusters.push({ px, left: px + 5, right: px + 5 + textW(text, true), text, faults: [fi] });
    }
    for (const c of clusters) {
      const d = el("div", "fault-label", c.text);
      d.title = faultsText(c.faults);
      d.dataset.faults = c.faults.map((fi) => F.index[fi]).join(" ");
      d.dataset.lane = li;
      setBox(d, c.left, y, c.right - c.left);
      placed.push([c.left, c.right]);
      frag.appendChild(d);
    }
  }
  function placeFree(placed, want, w, room) {
    for (let a = want; a <= want + room;) {
      const hit = placed.find(([l, r]) => !(a + w + GAP <= l || a >= r + GAP));
      if (!hit) return a;
      a = hit[1] + GAP;
    }
    return null;
  }
  function setBox(d, left, top, w) {
    d.style.left = (left - LABEL_W) + "px"; d.style.top = (top - AXIS) + "px"; d.style.width = w + "px";
  }
  function linkLabels(li, y, frag, placed) {
    for (const ki of laneLinks[li]) {
      const k = D.links[ki], px = x(k.t);
      if (px < LABEL_W || px > W) continue;
      const text = "Last-Event-ID " + k.id + (k.event < 0 ? ": no event has it" : "");
      const w = textW(text, k.event < 0), a = placeFree(placed, px + 4, w, 120);
      if (a == null) continue;
      const d = el("div", "link-label" + (k.event < 0 ? " dangling" : ""), text);
      d.title = linkText(k);
      setBox(d, a, y, w); placed.push([a, a + w]);
      frag.appendChild(d);
    }
  }
  function retryLabels(li, y, frag) {
    for (const wi of laneWindows[li]) {
      const w = D.windows[wi];
      let a = x(w.from) + 5;
      if (w.reconnect >= 0) a = Math.max(a, x(w.reconnect_t) + 8);
      if (a > W || x(w.to) < LABEL_W) continue;
      const text = w.reconnect < 0 ? "retry " + fmtT(w.retry * 1000) + ", no reconnection"
        : "reconnected after " + fmtT(w.reconnect_t - w.from) + ", retry " + fmtT(w.retry * 1000);
      const d = el("div", "retry-label" + (w.early ? " early" : ""), text);
      d.title = windowText(w);
      d.dataset.lane = li;
      setBox(d, Math.max(a, LABEL_W), y + MID - 6, textW(text, true));
      frag.appendChild(d);
    }
  }
  function unansweredMarks(li, y, frag) {
    for (const ui of laneUnanswered[li]) {
      const u = D.unanswered[ui], px = x(u.t);
      if (px < LABEL_W - 8 || px > W + 8) continue;
      const d = el("div", "unanswered");
      d.title = unansweredText(u);
      d.dataset.id = u.id;
      // Just before the lane's start: the request it flags.
      d.style.left = (px - LABEL_W - 13) + "px"; d.style.top = (y + MID - AXIS - 5.5) + "px";
      frag.appendChild(d);
    }
  }
  function drawOverlay(r0, r1) {
    const frag = document.createDocumentFragment();
    for (let r = r0; r <= r1; r++) {
      const li = rows[r];
      if (li < 0) continue;
      const y = rowY(r), placed = [];
      placeFaults(li, y, frag, placed);
      linkLabels(li, y, frag, placed);
      retryLabels(li, y, frag);
      unansweredMarks(li, y, frag);
    }
    overlay.replaceChildren(frag);
    const runs = document.createDocumentFragment(), placed = [];
    for (const r of D.run) {
      const px = x(r.t), w = textW(r.label, true);
      if (px < LABEL_W || px > W) continue;
      // Past the right edge, the label goes to the left of its line.
      let a = px + w + 3 > W ? px - w - 3 : px + 3;
      a = placeFree(placed, a, w, 200);
      if (a == null) continue;
      const d = el("div", "run-label " + r.kind, r.label);
      d.title = r.label + (r.detail ? "\n" + r.detail : "");
      d.dataset.kind = r.kind;
      d.style.left = (a - LABEL_W) + "px"; d.style.top = "1px"; d.style.width = w + "px";
      placed.push([a, a + w]);
      runs.appendChild(d);
    }
    runLabels.replaceChildren(runs);
  }

  function laneText(li) {
    const l = D.lanes[li];
    let s = "exchange " + l.ex + " · " + l.stream + (l.label ? " · " + l.label : "");
    if (l.status) s += "\nstatus " + l.status + (l.origin && l.origin !== "upstream" ? " (from " + l.origin + ")" : "");
    if (l.lei != null) s += "\nLast-Event-ID " + JSON.stringify(l.lei);
    if (l.fwd != null) s += " (forwarded as " + l.fwd + ")";
    s += "\n" + fmtT(l.start) + " → " + (l.ended ? fmtT(l.end) + " (" + l.cause + ")" : "open");
    s += "\n" + l.n + " events";
    if (l.retry) s += "\nretry " + l.retry + " ms delivered";
    if (l.answers) s += "\nanswered in a JSON body";
    for (const ui of laneUnanswered[li]) s += "\n" + unansweredText(D.unanswered[ui]);
    return s;
  }
  function unansweredText(u) {
    let s = "request " + u.id + " (" + u.method + ") never got its response delivered to the client";
    s += u.finding ? "\n" + "e2e.every-request-answered: " + u.finding : "\nno finding names it (the verifier excused it, or kept other evidence)";
    return s;
  }
  function windowText(w) {
    const l = D.lanes[w.lane];
    let s = "exchange " + l.ex + " ended at " + fmtT(w.from) + " (" + l.cause + ") before its response";
    s += "\nretry " + w.retry + " ms, delivered on exchange " + D.lanes[w.retry_lane].ex + ": the client must wait until " + fmtT(w.to);
    if (w.reconnect < 0) s += "\nno reconnection followed";
    else s += "\nreconnected after " + fmtT(w.reconnect_t - w.from) + " on exchange " + D.lanes[w.reconnect].ex + (w.early ? ": too early, inside the retry window" : ": after the window");
    return s;
  }
  function linkText(k) {
    if (k.event < 0) return "exchange " + D.lanes[k.lane].ex + " resumed with Last-Event-ID " + JSON.stringify(k.id) + ", which no event of its session carried";
    return "exchange " + D.lanes[k.lane].ex + " resumed with Last-Event-ID " + JSON.stringify(k.id) + ": event " + E.index[k.event] + " of exchange " + D.lanes[E.lane[k.event]].ex;
  }

  let pending = false;
  const redraw = () => { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; draw(); }); } };

  function zoom(f, px) {
    const at = px == null ? (LABEL_W + W) / 2 : px, t = tAt(at);
    scale = Math.min(Math.max(scale * f, (W - LABEL_W) / (tEnd * 20)), 50);
    t0 = t - (at - LABEL_W) / scale;
    redraw();
  }

  function eventText(i) {
    const fate = FATES[E.fate[i]], fl = E.flags[i];
    let s = "event " + E.index[i] + " of exchange " + D.lanes[E.lane[i]].ex + " at " + fmtT(E.t[i]) + "\n" + fate;
    if (E.copies[i] > 1) s += ", written " + E.copies[i] + " times";
    if (E.id[i] >= 0) s += "\nid " + JSON.stringify(S[E.id[i]]) + ((fl & HASID) ? "" : " (not seen by the client)");
    if (fl & PRIMING) s += "\npriming event";
    if (fl & RESPONSE) s += (fl & ERROR) ? "\nJSON-RPC error response" : "\nJSON-RPC response";
    if (E.method[i] >= 0) s += "\n" + S[E.method[i]];
    if (fl & MODIFIED) s += "\nchanged by a fault";
    if (fl & CORRUPT) s += "\nJSON corrupted";
    if (!(fl & DISPATCHED) && !(fl & PRIMING)) s += "\nnot dispatched to the client";
    const fis = laneFaults[E.lane[i]].filter((fi) => F.event[fi] === i);
    if (fis.length) s += "\n" + faultsText(fis);
    return s;
  }

  function hit(ev) {
    const rect = canvas.getBoundingClientRect();
    const px = ev.clientX - rect.left, py = ev.clientY - rect.top;
    if (px < LABEL_W || py < AXIS) return null;
    const r = Math.floor((py - AXIS + scroller.scrollTop) / ROW), li = rows[r];
    if (li == null || li < 0) return null;
    const dy = py - rowY(r);
    const fis = laneFaults[li].filter((fi) => Math.abs(x(F.t[fi]) - px) <= 4);
    if (fis.length && dy < TRI + 6) return faultsText(fis);
    const l = D.lanes[li];
    let best = -1, bd = 5;
    for (let i = Math.max(l.first, lowerBound(li, tAt(px - 5)) - 1); i < l.first + l.n && x(E.t[i]) <= px + 5; i++) {
      const d = Math.abs(x(E.t[i]) - px);
      if (d <= bd) { bd = d; best = i; }
    }
    if (best >= 0) return eventText(best);
    for (const wi of laneWindows[li]) { const w = D.windows[wi]; if (px >= x(w.from) && px <= x(w.to)) return windowText(w); }
    return laneText(li);
  }

  let drag = null;
  canvas.addEventListener("mousedown", (e) => { drag = { x: e.clientX, t0 }; canvas.style.cursor = "grabbing"; });
  window.addEventListener("mouseup", () => { drag = null; canvas.style.cursor = "grab"; });
  window.addEventListener("mousemove", (e) => {
    if (drag) { t0 = drag.t0 - (e.clientX - drag.x) / scale; tip.style.display = "none"; redraw(); return; }
    if (e.target !== canvas) { tip.style.display = "none"; return; }
    const t = hit(e);
    if (!t) { tip.style.display = "none"; return; }
    tip.textContent = t; tip.style.display = "block";
    tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 470) + "px"; tip.style.top = (e.clientY + 14) + "px";
  });
  canvas.addEventListener("wheel", (e) => {
    if (e.ctrlKey || e.metaKey) { e.preventDefault(); zoom(e.deltaY < 0 ? 1.25 : 0.8, e.clientX - canvas.getBoundingClientRect().left); }
    else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) { e.preventDefault(); t0 += (e.deltaX || e.deltaY) / scale; redraw(); }
  }, { passive: false });
  scroller.addEventListener("scroll", redraw);
  window.addEventListener("resize", () => { resize(); redraw(); });
  window.addEventListener("keydown", (e) => {
    if (e.key === "+" || e.key === "=") zoom(1.5); else if (e.key === "-") zoom(1 / 1.5); else if (e.key === "0") { fit(); redraw(); }
  });
  $("zoom-in").onclick = () => zoom(1.5);
  $("zoom-out").onclick = () => zoom(1 / 1.5);
  $("zoom-fit").onclick = () => { fit(); redraw(); };

  // The header: the verdict, the run's counts, the client command.
  const meta = $("meta");
  const add = (label, value, bad) => { const s = el("span", bad ? "bad" : null, label + " "); s.appendChild(el("b", null, value)); meta.appendChild(s); return s; };
  if (D.verdict) meta.appendChild(el("span", "verdict " + D.verdict, D.verdict));
  add("profile", D.profile || "none");
  add("seed", String(D.seed));
  if (D.started) add("started", D.started);
  add("duration", fmtT(Math.max(D.end_us, 0) || tEnd));
  add("sessions", String(D.sessions.filter((s) => s.seq > 0).length));
  add("exchanges", String(D.lanes.length));
  add("events", String(E.lane.length));
  add("faults", String(F.lane.length));
  add("reconnections", String(D.links.length));
  add("unanswered requests", String(D.unanswered.length), D.unanswered.length > 0).id = "unanswered-count";
  if (D.exercised) { const x = el("span", "exercised", D.exercised); x.id = "exercised"; meta.appendChild(x); }
  if (D.note) $("note").textContent = D.note;
  if (D.command) {
    const c = $("command");
    c.hidden = false;
    const quote = (a) => /^[\w@%+=:,./-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'";
    c.appendChild(el("span", "label", "client command"));
    c.appendChild(el("code", null, D.command.map(quote).join(" ")));
    c.appendChild(el("span", "exit " + (D.exit_code === 0 ? "ok" : "bad"), "exit " + D.exit_code));
    c.dataset.exit = D.exit_code;
  }
  document.body.dataset.events = E.lane.length;
  document.body.dataset.lanes = D.lanes.length;

  // The checks: failed and warned ones with their evidence, then the
  // passed and skipped ones in a compact list.
  const byStatus = (st) => D.checks.filter((c) => c.status === st);
  const nFail = byStatus("fail").length, nWarn = byStatus("warn").length, nPass = byStatus("pass").length, nSkip = byStatus("skip").length;
  $("checks-title").textContent = D.verdict
    ? "Checks: " + nFail + " failed · " + nWarn + " warned · " + nPass + " passed · " + nSkip + " skipped"
    : "Checks (no report)";
  const checkTitle = (c) => c.summary + "\n" + c.status + " · severity " + c.severity + " · applied " + c.applied + " · " + c.count + " finding" + (c.count === 1 ? "" : "s") +
    (c.excused ? "\nexcused: " + c.excused.join("; ") : "");
  const list = $("checks");
  if (!D.checks.length) list.appendChild(el("li", "none", D.verdict ? "the report lists no checks" : "run without a report"));
  for (const c of D.checks.filter((c) => c.status !== "pass" && c.status !== "skip")) {
    const row = el("li", "check check-row " + c.status);
    row.dataset.check = c.id; row.dataset.status = c.status;
    row.title = checkTitle(c);
    row.appendChild(el("span", "badge", c.status));
    row.appendChild(el("span", "id", c.id));
    row.appendChild(el("span", "summary", c.summary));
    row.appendChild(el("span", "count", c.count + (c.count === 1 ? " finding" : " findings") + " in " + c.applied + (c.applied === 1 ? " case" : " cases") +
      (c.excused ? "; excused: " + c.excused.join(", ") : "")));
    const fl = el("ol", "findings");
    for (const f of D.findings.filter((f) => f.check === c.id)) fl.appendChild(findingItem(f));
    if (fl.children.length) row.appendChild(fl);
    list.appendChild(row);
  }
  for (const st of ["pass", "skip"]) {
    const cs = byStatus(st);
    if (!cs.length) continue;
    const g = el("div", "chips");
    g.appendChild(el("span", "badge " + st, st));
    for (const c of cs) {
      const chip = el("span", "check chip " + st);
      chip.appendChild(el("span", "id", c.id));
      chip.dataset.check = c.id; chip.dataset.status = st;
      chip.title = checkTitle(c);
      g.appendChild(chip);
    }
    $("checks-ok").appendChild(g);
  }
  function findingItem(f) {
    const li = el("li", "finding " + f.status);
    li.appendChild(el("span", "message", f.message));
    const where = [];
    where.push("at " + fmtT(f.at_ms * 1000));
    if (f.session) where.push("session " + f.session);
    if (f.ex) where.push("exchange " + f.ex);
    if (f.related && f.related.length) where.push("related " + f.related.join(", "));
    if (f.event_ids && f.event_ids.length) where.push("event ids " + f.event_ids.map((s) => JSON.stringify(s)).join(", "));
    if (f.fault) where.push("after " + f.fault);
    if (f.more) where.push(f.more + " more");
    li.appendChild(el("span", "where", " (" + where.join("; ") + ")"));
    li.dataset.check = f.check;
    li.onclick = () => {
      for (const o of document.querySelectorAll(".finding.selected")) o.classList.remove("selected");
      li.classList.add("selected");
      selected = new Set();
      for (const ex of [f.ex].concat(f.related || [])) if (laneByEx.has(ex)) selected.add(laneByEx.get(ex));
      if (f.ex && laneByEx.has(f.ex)) {
        const r = laneRow[laneByEx.get(f.ex)];
        scroller.scrollTop = Math.max(0, (r - 3) * ROW);
        const t = f.at_ms * 1000;
        if (x(t) < LABEL_W || x(t) > W) t0 = t - (W - LABEL_W) / scale / 2;
      }
      scroller.scrollIntoView({ block: "nearest" });
      redraw();
    };
    return li;
  }

  // The legend: every mark, drawn by the functions that draw the lanes.
  function swatch(paint) {
    const c = el("canvas"), dpr = window.devicePixelRatio || 1;
    c.width = 28 * dpr; c.height = ROW * dpr;
    const g = c.getContext("2d"); g.setTransform(dpr, 0, 0, dpr, 0, 0);
    paint(g);
    return c;
  }
  let group = null;
  function legendGroup(title) {
    group = el("div", "group");
    group.appendChild(el("span", "title", title));
    $("legend").appendChild(group);
  }
  function entry(key, text, paint, node) {
    const e = el("span", "entry");
    e.dataset.legend = key;
    e.appendChild(node || swatch(paint));
    e.appendChild(el("span", null, text));
    group.appendChild(e);
  }
  const lane = (stream) => (g) => markLane(g, 0, 28, 0, stream);
  const onLane = (paint) => (g) => { lane("post")(g); paint(g); };
  legendGroup("events");
  entry("delivered", "delivered", onLane((g) => markEvent(g, 14, 0, 0, 0)));
  entry("priming", "priming", onLane((g) => markEvent(g, 14, 0, 0, PRIMING)));
  entry("not-delivered", "dropped, lost, cut, stalled, undelivered", onLane((g) => markEvent(g, 14, 0, 1, 0)));
  entry("duplicated", "written more than once", onLane((g) => markEvent(g, 11, 0, 0, DUP)));
  entry("finding-event", "named by a finding", onLane((g) => { markEvent(g, 14, 0, 0, 0); markRing(g, 14, 0); }));
  entry("fault", "fault fired (hover: what it did)", onLane((g) => { markFault(g, 14, 0); markEvent(g, 14, 0, 0, 0); }));
  legendGroup("answers");
  entry("response", "JSON-RPC response (event or JSON body)", onLane((g) => markEvent(g, 14, 0, 0, RESPONSE)));
  entry("error-response", "error response", onLane((g) => markEvent(g, 14, 0, 0, RESPONSE | ERROR)));
  entry("response-not-delivered", "response not delivered", onLane((g) => markEvent(g, 14, 0, 1, RESPONSE)));
  const unansweredSwatch = el("span", "swatches");
  unansweredSwatch.appendChild(el("span", "unanswered"));
  unansweredSwatch.appendChild(el("span", "lane-pill", "no response"));
  entry("unanswered", "request never answered", null, unansweredSwatch);
  legendGroup("exchanges");
  entry("lane-post", "POST", lane("post"));
  entry("lane-get", "standalone GET", lane("get"));
  entry("lane-resume", "resumption", lane("resume"));
  entry("lane-legacy", "legacy SSE", lane("legacy"));
  entry("lane-other", "other", lane("other"));
  entry("end", "ended or client left", (g) => { markLane(g, 0, 14, 0, "post"); markEnd(g, 14, 0, "complete"); });
  entry("cut", "cut by a fault or the upstream", (g) => { markLane(g, 0, 14, 0, "post"); markEnd(g, 14, 0, "fault-closed"); });
  entry("finding-lane", "named by a finding (red label; darker: selected)", (g) => { g.fillStyle = C.finding; g.fillRect(0, 4, 14, ROW - 8); g.fillStyle = C.selected; g.fillRect(14, 4, 14, ROW - 8); });
  legendGroup("reconnections");
  entry("link", "Last-Event-ID → the event it names (red: none has it)", (g) => markLink(g, 26, MID + 3, 4, MID - 3));
  entry("retry-window", "retry window after an end before the response", (g) => { markLane(g, 0, 6, 0, "post"); markEnd(g, 6, 0, "fault-closed"); markWindow(g, 7, 27, 0); });
  entry("reconnect-early", "reconnected too early", (g) => { markWindow(g, 0, 27, 0); markReconnect(g, 10, 0, true); });
  entry("reconnect-late", "reconnected after the window", (g) => { markWindow(g, 0, 14, 0); markReconnect(g, 20, 0, false); });
  entry("run-end", "end of the run", (g) => markRun(g, 14, 2, ROW - 2));
  entry("run-profile", "profile change: a swap, a fault switched on or off (label above the axis)", (g) => markRun(g, 14, 2, ROW - 2));

  const tBuilt = performance.now();
  resize(); fit(); draw();
  // Time since navigation began: the HTML parsed, the data parsed, the
  // page built and the first frame drawn. Kept as data for tests and
  // tools, not shown.
  const tDrawn = performance.now(), b = document.body.dataset;
  b.renderMs = tDrawn.toFixed(1);
  b.html = tStart.toFixed(1);
  b.parse = (tParsed - tStart).toFixed(1);
  b.build = (tBuilt - tParsed).toFixed(1);
  b.draw = (tDrawn - tBuilt).toFixed(1);
  b.rendered = "true";
})();
