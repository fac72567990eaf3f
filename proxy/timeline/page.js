"use strict";
(function () {
  const tStart = performance.now();
  const D = JSON.parse(document.getElementById("data").textContent);
  const tParsed = performance.now();
  const S = D.strings, E = D.events, F = D.faults;
  const FATES = ["delivered", "dropped", "lost", "cut", "stalled", "undelivered"];
  const PRIMING = 1, DUP = 2, HASID = 4, MODIFIED = 8, FAULT = 16, CORRUPT = 32, DISPATCHED = 64;
  const ROW = 16, AXIS = 22, LABEL_W = 260, PAD = 24;
  const C_DELIVERED = "#33475b", C_PRIMING = "#2f80c4", C_BAD = "#c62828", C_DUP = "#e07b00", C_LINK = "#1565c0";

  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e; };
  const fmtT = (us) => {
    const a = Math.abs(us);
    if (a >= 1e6) return (us / 1e6).toFixed(a >= 1e8 ? 0 : 3).replace(/\.?0+$/, "") + "s";
    if (a >= 1e3) return (us / 1e3).toFixed(1).replace(/\.0$/, "") + "ms";
    return us + "µs";
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

  // Faults per lane, in time order, for drawing and hit tests.
  const laneFaults = D.lanes.map(() => []);
  for (let i = 0; i < F.lane.length; i++) laneFaults[F.lane[i]].push(i);
  for (const a of laneFaults) a.sort((x, y) => F.t[x] - F.t[y]);

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
  const ctx = canvas.getContext("2d");
  let W = 0, H = 0, t0 = 0, scale = 1; // scale: px per µs

  function resize() {
    W = stage.clientWidth; H = stage.clientHeight;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.max(1, Math.floor(W * dpr)); canvas.height = Math.max(1, Math.floor(H * dpr));
    canvas.style.width = W + "px"; canvas.style.height = H + "px";
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    $("spacer").style.height = Math.max(0, AXIS + rows.length * ROW + PAD - H) + "px";
  }
  // fit shows the whole run, from its first exchange, with a margin.
  let tFirst = tEnd;
  for (const l of D.lanes) tFirst = Math.min(tFirst, l.start);
  function fit() {
    const span = Math.max(tEnd - tFirst, 1);
    scale = Math.max(1e-9, (W - LABEL_W - PAD - 90) / span);
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
      ctx.beginPath(); ctx.moveTo(px, AXIS); ctx.lineTo(px, H); ctx.stroke();
      ctx.fillText(fmtT(t), px + 3, AXIS / 2);
    }
  }

  function drawLane(li, y) {
    const l = D.lanes[li];
    const sel = selected && selected.has(li);
    if (sel || findingLanes.has(li)) { ctx.fillStyle = sel ? "#f9c9c4" : "#fdecea"; ctx.fillRect(LABEL_W, y, W - LABEL_W, ROW); }
    const mid = y + ROW / 2;
    const xa = Math.max(LABEL_W, x(l.start)), xb = Math.min(W, x(l.end));
    if (xb >= LABEL_W && xa <= W) {
      ctx.fillStyle = l.stream === "resume" ? "#9fc3e6" : l.stream === "get" ? "#b7d7b0" : "#c9d1db";
      ctx.fillRect(xa, mid - 1, Math.max(1, xb - xa), 2);
      if (l.ended && x(l.end) <= W && x(l.end) >= LABEL_W) {
        const bad = l.cause !== "complete";
        ctx.fillStyle = bad ? C_BAD : "#7b8794";
        ctx.fillRect(x(l.end) - (bad ? 1.5 : 0.5), y + 2, bad ? 3 : 1, ROW - 4);
      }
    }
    // Events in view; marks closer than a pixel to the previous one of the
    // same colour are skipped, so a dense lane costs no more than its width.
    const tmin = tAt(LABEL_W - 4), tmax = tAt(W + 4);
    let lastX = -1e9, lastC = "";
    const end = l.first + l.n;
    for (let i = lowerBound(li, tmin); i < end && E.t[i] <= tmax; i++) {
      const fl = E.flags[i], fate = E.fate[i];
      let c = fate !== 0 ? C_BAD : (fl & DUP) ? C_DUP : (fl & PRIMING) ? C_PRIMING : C_DELIVERED;
      const px = x(E.t[i]);
      if (px - lastX < 1 && c === lastC) continue;
      lastX = px; lastC = c;
      ctx.fillStyle = c;
      if (fate !== 0) ctx.fillRect(px - 1.5, y + 1, 3, ROW - 2);
      else ctx.fillRect(px - 1, y + 3, 2, ROW - 6);
      if (fl & DUP) { ctx.fillRect(px + 2, y + 3, 2, ROW - 6); }
      if (findingIDs.size && E.id[i] >= 0 && findingIDs.has(S[E.id[i]]) && findingLanes.has(li)) {
        ctx.strokeStyle = C_BAD; ctx.lineWidth = 1.5; ctx.beginPath(); ctx.arc(px, mid, 5.5, 0, 2 * Math.PI); ctx.stroke(); ctx.lineWidth = 1;
      }
    }
    // Faults: a red triangle, with the kind when there is room.
    const fs = laneFaults[li];
    let lastLabel = -1e9;
    ctx.font = "10px system-ui, sans-serif"; ctx.textBaseline = "top";
    for (const fi of fs) {
      const px = x(F.t[fi]);
      if (px < LABEL_W - 4 || px > W + 4) continue;
      ctx.fillStyle = C_BAD;
      ctx.beginPath(); ctx.moveTo(px - 4, y); ctx.lineTo(px + 4, y); ctx.lineTo(px, y + 6); ctx.fill();
      if (px - lastLabel > 70) {
        ctx.fillText(S[F.kind[fi]], px + 5, y);
        lastLabel = px;
      }
    }
  }

  function drawLinks(r0, r1) {
    ctx.lineWidth = 1.2; ctx.font = "10px system-ui, sans-serif"; ctx.textBaseline = "bottom";
    for (const k of D.links) {
      const ra = laneRow[k.lane];
      const xa = x(k.t), ya = rowY(ra) + ROW / 2;
      if (k.event < 0) {
        if (ra < r0 || ra > r1 || xa < LABEL_W || xa > W) continue;
        ctx.fillStyle = C_BAD; ctx.fillText("Last-Event-ID " + k.id + ": no event has it", xa + 4, ya - 2);
        continue;
      }
      const rb = laneRow[E.lane[k.event]];
      if (Math.max(ra, rb) < r0 || Math.min(ra, rb) > r1) continue;
      const xb = x(E.t[k.event]), yb = rowY(rb) + ROW / 2;
      if (Math.max(xa, xb) < LABEL_W || Math.min(xa, xb) > W) continue;
      ctx.strokeStyle = C_LINK; ctx.fillStyle = C_LINK;
      const bend = Math.min(60, Math.abs(ya - yb) / 2 + 10);
      ctx.beginPath(); ctx.moveTo(xa, ya);
      ctx.bezierCurveTo(xa - bend, ya, xb + bend, yb, xb + 3, yb);
      ctx.stroke();
      ctx.beginPath(); ctx.moveTo(xb + 2, yb); ctx.lineTo(xb + 8, yb - 3); ctx.lineTo(xb + 8, yb + 3); ctx.fill();
      if (ra >= r0 && ra <= r1 && xa > LABEL_W) ctx.fillText("Last-Event-ID " + k.id, xa + 4, ya - 2);
    }
    ctx.lineWidth = 1;
  }

  function draw() {
    ctx.clearRect(0, 0, W, H);
    const r0 = firstRow(), r1 = Math.min(rows.length - 1, r0 + Math.ceil((H - AXIS) / ROW));
    for (let r = r0; r <= r1; r++) {
      const y = rowY(r), li = rows[r];
      if (li < 0) { ctx.fillStyle = "#eef1f5"; ctx.fillRect(0, y, W, ROW); continue; }
      if (r % 2) { ctx.fillStyle = "#f4f6f8"; ctx.fillRect(0, y, W, ROW); }
    }
    drawAxis();
    ctx.save(); ctx.beginPath(); ctx.rect(0, AXIS, W, H - AXIS); ctx.clip();
    for (let r = r0; r <= r1; r++) if (rows[r] >= 0) drawLane(rows[r], rowY(r));
    drawLinks(r0, r1);
    ctx.restore();
    ctx.fillStyle = "rgba(255,255,255,0.92)"; ctx.fillRect(0, AXIS, LABEL_W, H - AXIS);
    ctx.strokeStyle = "#d8dde4"; ctx.beginPath(); ctx.moveTo(LABEL_W - 0.5, 0); ctx.lineTo(LABEL_W - 0.5, H); ctx.stroke();
    drawLabels(r0, r1);
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
        d.title = laneText(l);
      }
      d.style.top = y + "px"; d.style.height = ROW + "px"; d.style.lineHeight = ROW + "px";
      frag.appendChild(d);
    }
    labels.replaceChildren(frag);
  }

  function laneText(l) {
    let s = "exchange " + l.ex + " · " + l.stream + (l.label ? " · " + l.label : "");
    if (l.status) s += "\nstatus " + l.status + (l.origin && l.origin !== "upstream" ? " (from " + l.origin + ")" : "");
    if (l.lei != null) s += "\nLast-Event-ID " + JSON.stringify(l.lei);
    if (l.fwd != null) s += " (forwarded as " + l.fwd + ")";
    s += "\n" + fmtT(l.start) + " → " + (l.ended ? fmtT(l.end) + " (" + l.cause + ")" : "open");
    s += "\n" + l.n + " events";
    return s;
  }

  let pending = false;
  const redraw = () => { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; draw(); }); } };

  function zoom(f, px) {
    const t = tAt(px == null ? (LABEL_W + W) / 2 : px);
    scale = Math.min(Math.max(scale * f, (W - LABEL_W) / (tEnd * 20)), 50);
    t0 = t - ((px == null ? (LABEL_W + W) / 2 : px) - LABEL_W) / scale;
    redraw();
  }

  function eventText(i) {
    const fate = FATES[E.fate[i]], fl = E.flags[i];
    let s = "event " + E.index[i] + " of exchange " + D.lanes[E.lane[i]].ex + " at " + fmtT(E.t[i]) + "\n" + fate;
    if (E.copies[i] > 1) s += ", written " + E.copies[i] + " times";
    if (E.id[i] >= 0) s += "\nid " + JSON.stringify(S[E.id[i]]) + ((fl & HASID) ? "" : " (not seen by the client)");
    if (fl & PRIMING) s += "\npriming event";
    if (E.method[i] >= 0) s += "\n" + S[E.method[i]];
    if (fl & MODIFIED) s += "\nchanged by a fault";
    if (fl & CORRUPT) s += "\nJSON corrupted";
    if (!(fl & DISPATCHED) && !(fl & PRIMING)) s += "\nnot dispatched to the client";
    return s;
  }

  function hit(ev) {
    const rect = canvas.getBoundingClientRect();
    const px = ev.clientX - rect.left, py = ev.clientY - rect.top;
    if (px < LABEL_W || py < AXIS) return null;
    const r = Math.floor((py - AXIS + scroller.scrollTop) / ROW), li = rows[r];
    if (li == null || li < 0) return null;
    for (const fi of laneFaults[li]) if (Math.abs(x(F.t[fi]) - px) <= 4 && py - rowY(r) < 7) {
      return "fault " + F.index[fi] + " (" + S[F.kind[fi]] + ") at " + fmtT(F.t[fi]) + " on exchange " + D.lanes[li].ex;
    }
    const l = D.lanes[li];
    let best = -1, bd = 5;
    for (let i = Math.max(l.first, lowerBound(li, tAt(px - 5)) - 1); i < l.first + l.n && x(E.t[i]) <= px + 5; i++) {
      const d = Math.abs(x(E.t[i]) - px);
      if (d <= bd) { bd = d; best = i; }
    }
    return best >= 0 ? eventText(best) : laneText(l);
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
    tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 430) + "px"; tip.style.top = (e.clientY + 14) + "px";
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

  // The header, the findings and the counts.
  const meta = $("meta");
  const add = (label, value) => { const s = el("span", null, label + " "); s.appendChild(el("b", null, value)); meta.appendChild(s); };
  if (D.verdict) { const v = el("span", "verdict " + D.verdict, D.verdict); meta.appendChild(v); }
  add("profile", D.profile || "none");
  add("seed", String(D.seed));
  if (D.started) add("started", D.started);
  add("duration", fmtT(tEnd));
  add("sessions", String(D.sessions.filter((s) => s.seq > 0).length));
  add("exchanges", String(D.lanes.length));
  add("events", String(E.lane.length));
  add("faults", String(F.lane.length));
  add("reconnections", String(D.links.length));
  if (D.note) $("note").textContent = D.note;
  $("stats").textContent = D.lanes.length + " lanes, " + E.lane.length + " events";
  $("stats").dataset.lanes = D.lanes.length;
  $("stats").dataset.events = E.lane.length;

  const list = $("findings");
  $("findings-title").textContent = D.verdict ? "Findings (" + D.findings.length + ")" : "Findings (no report)";
  if (!D.findings.length) list.appendChild(el("li", "none", D.verdict ? "every check passed" : "run without a report"));
  for (const f of D.findings) {
    const li = el("li", "finding " + f.status);
    li.appendChild(el("span", "badge", f.status));
    li.appendChild(el("span", "check", f.check));
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
      for (const o of list.querySelectorAll(".selected")) o.classList.remove("selected");
      li.classList.add("selected");
      selected = new Set();
      for (const ex of [f.ex].concat(f.related || [])) if (laneByEx.has(ex)) selected.add(laneByEx.get(ex));
      if (f.ex && laneByEx.has(f.ex)) {
        const r = laneRow[laneByEx.get(f.ex)];
        scroller.scrollTop = Math.max(0, (r - 3) * ROW);
        const t = f.at_ms * 1000;
        if (x(t) < LABEL_W || x(t) > W) t0 = t - (W - LABEL_W) / scale / 2;
      }
      redraw();
    };
    list.appendChild(li);
  }

  const tBuilt = performance.now();
  resize(); fit(); draw();
  // Time since navigation began: the HTML parsed, the data parsed, the
  // page built and the first frame drawn. The parts are kept beside it.
  const rm = $("render-ms"), tDrawn = performance.now();
  rm.textContent = tDrawn.toFixed(1);
  rm.dataset.html = tStart.toFixed(1);
  rm.dataset.parse = (tParsed - tStart).toFixed(1);
  rm.dataset.build = (tBuilt - tParsed).toFixed(1);
  rm.dataset.draw = (tDrawn - tBuilt).toFixed(1);
  document.body.dataset.rendered = "true";
})();
