// perflab's charts, drawn with uPlot: the same functions draw the live page (`perflab run --live`,
// `perflab watch`) and the HTML report's per-second panels, from the same shape of data.
//
// A trial's seconds: { name, t: [s since its load phase began], per_s: [...], p50: [...] | null,
// p99: [...] | null } (null where a second has no value). Phases: [[name, start, end], ...] on the
// same axis (seconds since the load phase began; `end` null while the phase runs).
"use strict";
const perflabCharts = (() => {
  const COLORS = { per_s: [31, 119, 180], p50: [44, 160, 44], p99: [214, 39, 40] };
  const LINES = [["per_s", "per s"], ["p50", "p50 ms"], ["p99", "p99 ms"]];
  // The report draws a point's repetitions alike but for their dashes: solid, then these.
  const DASHES = [[6, 3], [2, 3], [8, 3, 2, 3]];
  // As the report's SVG charts shade them.
  const PHASES = {
    setup: "rgba(160,160,160,0.12)",
    baseline: "rgba(31,119,180,0.10)",
    warmup: "rgba(255,221,0,0.16)",
    load: "rgba(255,127,14,0.10)",
    recovery: "rgba(44,160,44,0.10)",
  };
  const rgba = (c, a) => "rgba(" + c[0] + "," + c[1] + "," + c[2] + "," + a + ")";
  // A figure to 4 significant digits, as the live events carry them.
  const fig = (u, v) => (v === null || v === undefined || !isFinite(v)) ? "–" : String(+Number(v).toPrecision(4));
  const has = (a) => Array.isArray(a) && a.some((v) => v !== null && v !== undefined);

  // The phases shaded behind the lines, each named at the top of its band.
  function phaseHook(get) {
    return (u) => {
      const ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
      const [xmin, xmax] = [u.scales.x.min, u.scales.x.max];
      ctx.save();
      ctx.font = Math.round(11 * devicePixelRatio) + "px system-ui, sans-serif";
      ctx.textBaseline = "top";
      for (const [name, start, end] of get()) {
        const a = Math.max(start, xmin), b = Math.min(end === null || end === undefined ? xmax : end, xmax);
        if (!(b > a)) continue;
        const x0 = u.valToPos(a, "x", true), x1 = u.valToPos(b, "x", true);
        ctx.fillStyle = PHASES[name] || PHASES.setup;
        ctx.fillRect(x0, top, x1 - x0, h);
        ctx.fillStyle = "#666";
        if (x1 - x0 > ctx.measureText(name).width + 6 * devicePixelRatio) ctx.fillText(name, x0 + 3 * devicePixelRatio, top + 2 * devicePixelRatio);
      }
      ctx.restore();
    };
  }

  // At rest (no cursor over the chart) the legend says the latest second's figures.
  function latest(u) {
    const n = u.data[0].length;
    if (u.cursor.idx === null || u.cursor.idx === undefined) {
      if (n) u.setLegend({ idx: n - 1 });
    }
  }
  const hooks = (ph) => ({ drawClear: [phaseHook(ph)], draw: [latest], setCursor: [latest] });

  // The x axis of several trials' seconds: every second any of them has, in order, and each
  // trial's values on it (null where it has none).
  function align(trials, keys) {
    const xs = [...new Set(trials.flatMap((t) => t.t))].sort((a, b) => a - b);
    const at = new Map(xs.map((x, i) => [x, i]));
    const out = [xs];
    for (const t of trials) {
      for (const k of keys) {
        const col = new Array(xs.length).fill(null);
        if (t[k]) t.t.forEach((x, i) => { col[at.get(x)] = t[k][i] === undefined ? null : t[k][i]; });
        out.push(col);
      }
    }
    return out;
  }

  // The range of x: the data's (`xs`), the phases' and `span` (the planned phases), whichever is
  // wider. Set, not left to uPlot, which gives a single second a range of its own.
  function xRange(xs, phases, span) {
    let lo = Infinity, hi = -Infinity;
    for (const x of xs) { lo = Math.min(lo, x); hi = Math.max(hi, x); }
    for (const [, s, e] of phases) { lo = Math.min(lo, s); hi = Math.max(hi, e === null || e === undefined ? s : e); }
    if (span) { lo = Math.min(lo, span[0]); hi = Math.max(hi, span[1]); }
    if (!isFinite(lo) || !isFinite(hi)) return [0, 1];
    return lo === hi ? [lo - 1, hi + 1] : [lo, hi];
  }
  function setX(chart, phases, span) {
    const [min, max] = xRange(chart.data[0], phases, span);
    chart.setScale("x", { min, max });
  }

  // A trial's per-second panel: throughput per second on the left axis, p50 and p99 (ms) on the
  // right, the trials before `current` (the same point's earlier repetitions) faint behind it,
  // the phases shaded. `current`: the index in `trials` drawn bold (-1: all alike, as the report
  // draws a point's repetitions); `keys`: the lines drawn (by default those the trials have).
  // Returns { chart, set(trials, phases) } for a live update.
  function seconds(el, trials, phases, opts) {
    opts = opts || {};
    const current = opts.current === undefined ? trials.length - 1 : opts.current;
    const keys = opts.keys || LINES.map(([k]) => k).filter((k) => k === "per_s" || trials.some((t) => has(t[k])));
    let ph = phases || [];
    const series = [{ label: "s", value: fig }];
    trials.forEach((t, i) => {
      const bold = current < 0 || i === current;
      for (const k of keys) {
        const label = LINES.find(([key]) => key === k)[1];
        const line = {
          label: (t.name ? t.name + " " : "") + label,
          stroke: rgba(COLORS[k], bold ? 1 : 0.35),
          width: bold ? (current < 0 ? 1.5 : 2) : 1,
          scale: k === "per_s" ? "y" : "ms",
          value: fig,
        };
        if (current < 0 && i > 0) line.dash = DASHES[(i - 1) % DASHES.length];
        series.push(line);
      }
    });
    const axes = [{ label: "seconds since the load phase began" }, { label: opts.unit || "per s" }];
    if (keys.length > 1) axes.push({ scale: "ms", side: 1, grid: { show: false }, label: "ms" });
    const data = align(trials, keys);
    const chart = new uPlot({
      width: opts.width || 520,
      height: opts.height || 240,
      scales: { x: { time: false, auto: false, range: xRange(data[0], ph, opts.span) }, y: { range: (u, lo, hi) => [0, hi > 0 ? hi * 1.05 : 1] } },
      series,
      axes,
      hooks: hooks(() => ph),
    }, data, el);
    return {
      chart,
      keys,
      set(ts, phs) { ph = phs || ph; chart.setData(align(ts, keys)); setX(chart, ph, opts.span); },
    };
  }

  // This machine over a trial: CPU busy (% of all CPUs), perflab's and the target's CPU (% of one
  // core) on the left axis, memory used (MiB) on the right, the phases shaded.
  // `h`: { t, cpu, loadgen, target, mem }. Returns { chart, set(h, phases) }.
  function host(el, h, phases, opts) {
    opts = opts || {};
    let ph = phases || [];
    const series = [
      { label: "s", value: fig },
      { label: "CPU busy %", stroke: "#9467bd", width: 2, value: fig },
      { label: "perflab %", stroke: "#8c564b", width: 1.5, value: fig },
      { label: "target %", stroke: "#e377c2", width: 1.5, value: fig },
      { label: "memory MiB", stroke: "#7f7f7f", width: 1, scale: "mb", value: fig },
    ];
    const data = (d) => [d.t, d.cpu, d.loadgen, d.target, d.mem];
    const chart = new uPlot({
      width: opts.width || 520,
      height: opts.height || 240,
      scales: { x: { time: false, auto: false, range: xRange(h.t, ph, opts.span) }, y: { range: (u, lo, hi) => [0, Math.max(hi * 1.05, 1)] } },
      series,
      axes: [{ label: "seconds since the load phase began" }, { label: "%" }, { scale: "mb", side: 1, grid: { show: false }, label: "MiB" }],
      hooks: hooks(() => ph),
    }, data(h), el);
    return { chart, set(d, phs) { ph = phs || ph; chart.setData(data(d)); setX(chart, ph, opts.span); } };
  }

  // Adaptive repetitions: each point's CI half-width (% of the mean) after each round against
  // its target, one line a point, the target dashed, and a row a point saying where it stands
  // ("stopped: ..." once it stopped). `points`: [{ label, target, rounds: [[repetitions,
  // half_width_pct]], stopped }]. Draws into `el` (emptied first).
  function ci(el, points) {
    el.textContent = "";
    const table = document.createElement("table");
    table.className = "grid ci";
    const head = table.insertRow();
    for (const h of ["point", "after each round: repetitions, CI ±%", "target", "where it stands"]) {
      const th = document.createElement("th");
      th.textContent = h;
      head.appendChild(th);
    }
    for (const p of points) {
      const r = table.insertRow();
      r.className = "ci-point";
      const last = p.rounds[p.rounds.length - 1];
      const cells = [
        p.label,
        p.rounds.map(([n, hw]) => n + ": " + (hw === null ? "–" : "±" + fig(null, hw) + " %")).join(", "),
        "±" + fig(null, p.target) + " %",
        p.stopped ? "stopped: " + p.stopped : "another round runs (±" + fig(null, last ? last[1] : null) + " %)",
      ];
      for (const c of cells) r.insertCell().textContent = c;
    }
    el.appendChild(table);
    const box = document.createElement("div");
    el.appendChild(box);
    const xs = [...new Set(points.flatMap((p) => p.rounds.map(([n]) => n)))].sort((a, b) => a - b);
    if (!xs.length) return null;
    const data = [xs];
    const series = [{ label: "repetitions", value: fig }];
    const palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
    points.forEach((p, i) => {
      const by = new Map(p.rounds);
      data.push(xs.map((x) => (by.has(x) ? by.get(x) : null)));
      series.push({ label: p.label + " ±%", stroke: palette[i % palette.length], width: 2, spanGaps: true, points: { show: true }, value: fig });
    });
    const target = points.length ? points[0].target : null;
    data.push(xs.map(() => target));
    series.push({ label: "target ±%", stroke: "#444", dash: [6, 4], width: 1, value: fig });
    return new uPlot({
      width: 520,
      height: 200,
      scales: { x: { time: false }, y: { range: (u, lo, hi) => [0, Math.max(hi * 1.1, 1)] } },
      series,
      axes: [{ label: "repetitions", incrs: [1, 2, 5, 10, 20, 50, 100] }, { label: "±% of the mean" }],
      hooks: { draw: [latest], setCursor: [latest] },
    }, data, box);
  }

  // The report's panels: each JSON data block `script.perflab-seconds` ({ points: [{ label, unit,
  // phases, trials, host }] }) draws point i's per-second panel, under its label, and its machine
  // panel (`host`: the first repetition's samples, when it has them) into the element `<data-at>i`.
  function report() {
    for (const block of document.querySelectorAll("script.perflab-seconds")) {
      const data = JSON.parse(block.textContent);
      data.points.forEach((p, i) => {
        const el = document.getElementById(block.dataset.at + i);
        if (!el) return;
        const h = document.createElement("h4");
        h.textContent = p.label;
        el.appendChild(h);
        const box = document.createElement("div");
        el.appendChild(box);
        seconds(box, p.trials, p.phases, { current: -1, unit: p.unit, width: 640, height: 260 });
        if (p.host) {
          const hb = document.createElement("div");
          hb.className = "host";
          el.appendChild(hb);
          host(hb, p.host, p.phases, { width: 640, height: 200 });
        }
      });
    }
  }

  return { seconds, host, ci, report, align };
})();
