// SPDX-License-Identifier: Apache-2.0
// The script of report.html (report_html.cpp writes the page, report_assets.h embeds this file
// at build time without these leading comment lines; ctest report_script_syntax runs node --check
// on it). It reads the page's data (the JSON in #report-data and the rect.buffer attributes) and
// draws the axes, the layout of the memory maps, the legend, the fragmentation curves, the engine
// timeline and the tooltips. No URL and no library: the page works offline, from a file.
'use strict';
(() => {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  // The SVG namespace as the HTML parser assigns it, so that the page names no URL.
  const probe = document.createElement('div');
  probe.innerHTML = '<svg></svg>';
  const SVG_NS = probe.firstChild.namespaceURI;
  const MARGIN = { left: 100, right: 14, top: 10, bottom: 36 };
  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7',
    '#9c755f', '#86bcb6'];
  // A kind is a tint of its layer's colour (mixed with white, not transparent: the free memory's
  // hatching must not show through a buffer).
  const KIND_TINT = { weight: 0, program: 0, activation: 0.45, scratch: 0.7,
    parameter: 0, constant: 0, output: 0.45, 'HLO temp': 0.7 };  // the last four: an HLO program's
  const TIME_UNIT = data.time_unit || 'core cycles';
  const DETAILS = data.details || {};  // more tooltip lines by buffer id (memory_map_page)
  const end = Math.max(1, data.end);
  const tooltip = document.getElementById('tooltip');

  function svg(tag, attrs, parent) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }
  // A number in at most four digits: 384, 1.5, 12.25.
  function short(v) {
    const s = v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
    return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
  }
  function bytes(n) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let u = 0;
    while (n >= 1024 && u + 1 < units.length) { n /= 1024; u++; }
    return short(n) + ' ' + units[u];
  }
  function cycles(n) {
    if (n >= 1e9) return short(n / 1e9) + 'G';
    if (n >= 1e6) return short(n / 1e6) + 'M';
    if (n >= 1e4) return short(n / 1e3) + 'k';
    return String(Math.round(n));
  }
  // Round tick steps (1, 2, 5 times a power of ten; powers of two for bytes).
  function ticks(max, count, binary) {
    const raw = max / count;
    let step;
    if (binary) {
      step = Math.pow(2, Math.ceil(Math.log2(Math.max(raw, 1))));
    } else {
      const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-12))));
      step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
    }
    const out = [];
    for (let v = 0; v <= max * 1.0000001; v += step) out.push(v);
    return out;
  }
  // A swatch and its text, appended to a legend.
  function legendItem(legend, colour, text) {
    const span = document.createElement('span');
    const swatch = document.createElement('i');
    swatch.style.background = colour;
    span.append(swatch, text);
    legend.appendChild(span);
  }
  // A palette colour that stays the same for the same name, run after run.
  function paletteColour(name) {
    let h = 0;
    for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    return PALETTE[h % PALETTE.length];
  }
  function tint(colour, amount) {
    const c = parseInt(colour.slice(1), 16);
    const mix = (v) => Math.round(v + (255 - v) * amount);
    return `rgb(${mix(c >> 16)}, ${mix((c >> 8) & 255)}, ${mix(c & 255)})`;
  }
  function bufferFill(layer, kind) { return tint(layerColour(layer), KIND_TINT[kind] ?? 0.3); }
  function layerColour(layer) {
    if (layer === 'program') return '#8a8a8a';
    if (layer === 'input') return '#2f4b7c';
    const m = /^(?:layer|request) (\d+)$/.exec(layer);
    if (m) return PALETTE[Number(m[1]) % PALETTE.length];
    return paletteColour(layer);
  }
  function showTooltip(html, event) {
    tooltip.innerHTML = html;
    tooltip.hidden = false;
    moveTooltip(event);
  }
  function moveTooltip(event) {
    const pad = 14;
    const w = tooltip.offsetWidth, h = tooltip.offsetHeight;
    let x = event.clientX + pad, y = event.clientY + pad;
    if (x + w > window.innerWidth) x = event.clientX - w - pad;
    if (y + h > window.innerHeight) y = event.clientY - h - pad;
    tooltip.style.left = Math.max(0, x) + 'px';
    tooltip.style.top = Math.max(0, y) + 'px';
  }
  function hideTooltip() { tooltip.hidden = true; }
  function escapeText(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
  }
  // A time axis below a plot of the given width, shared by every chart of the page.
  function timeAxis(parent, width, y) {
    const g = svg('g', { class: 'axis' }, parent);
    const plot = width - MARGIN.left - MARGIN.right;
    svg('line', { x1: MARGIN.left, x2: MARGIN.left + plot, y1: y, y2: y }, g);
    for (const t of ticks(end, Math.max(2, Math.floor(plot / 90)), false)) {
      const x = MARGIN.left + (t / end) * plot;
      svg('line', { x1: x, x2: x, y1: y, y2: y + 4 }, g);
      svg('text', { x, y: y + 15, 'text-anchor': 'middle' }, g).textContent = cycles(t);
    }
    svg('text', { x: MARGIN.left + plot, y: y + 29, 'text-anchor': 'end' }, g).textContent = `time (${TIME_UNIT})`;
  }
  // A value axis with grid lines; format turns a tick into its label.
  function valueAxis(parent, width, top, height, max, binary, format, title) {
    const grid = svg('g', { class: 'grid' }, parent);
    const axis = svg('g', { class: 'axis' }, parent);
    svg('line', { x1: MARGIN.left, x2: MARGIN.left, y1: top, y2: top + height }, axis);
    for (const v of ticks(max, Math.max(2, Math.floor(height / 40)), binary)) {
      const y = top + height - (v / max) * height;
      svg('line', { x1: MARGIN.left, x2: width - MARGIN.right, y1: y, y2: y }, grid);
      svg('text', { x: MARGIN.left - 5, y: y + 4, 'text-anchor': 'end' }, axis).textContent = format(v);
    }
    svg('text', { x: 12, y: top + height / 2, transform: `rotate(-90 12 ${top + height / 2})`,
      'text-anchor': 'middle' }, axis).textContent = title;
  }

  // ---- memory maps
  const maps = [...document.querySelectorAll('figure.map')].map((fig, i) => ({
    index: i,
    fig,
    svg: fig.querySelector('svg'),
    capacity: Number(fig.dataset.capacity),
    rects: [...fig.querySelectorAll('rect.buffer')],
  }));
  let usedTop = 1, capacityTop = 1;
  for (const m of maps) {
    capacityTop = Math.max(capacityTop, m.capacity);
    for (const r of m.rects) usedTop = Math.max(usedTop, Number(r.dataset.offset) + Number(r.dataset.size));
  }
  let wholeCapacity = false;
  const rangeButton = document.getElementById('y-range');
  // The used addresses and a little room, rounded up to a tick (or the whole capacity).
  function yTop() {
    if (wholeCapacity) return capacityTop;
    const target = usedTop * 1.06;
    const step = ticks(target, 6, true)[1] || target;
    return Math.min(capacityTop, Math.ceil(target / step) * step);
  }
  function layoutMap(m) {
    const width = Math.max(300, m.fig.clientWidth);
    const height = 360;
    const plotW = width - MARGIN.left - MARGIN.right, plotH = height - MARGIN.top - MARGIN.bottom;
    const top = yTop();
    const s = m.svg;
    for (const child of [...s.childNodes]) if (!(child.classList && child.classList.contains('buffers'))) child.remove();
    const buffers = s.querySelector('g.buffers');
    s.setAttribute('width', width);
    s.setAttribute('height', height);
    const back = svg('g', {});
    s.insertBefore(back, buffers);
    const defs = svg('defs', {}, back);
    const hatch = svg('pattern', { id: `free-${m.index}`, width: 7, height: 7, patternUnits: 'userSpaceOnUse',
      patternTransform: 'rotate(45)' }, defs);
    svg('rect', { width: 7, height: 7, fill: '#fbfbfb' }, hatch);
    svg('line', { x1: 0, y1: 0, x2: 0, y2: 7, stroke: '#d4d4d4', 'stroke-width': 2 }, hatch);
    valueAxis(back, width, MARGIN.top, plotH, top, true, bytes, 'address');
    svg('rect', { x: MARGIN.left, y: MARGIN.top, width: plotW, height: plotH, fill: `url(#free-${m.index})`,
      stroke: '#aaa' }, back);
    timeAxis(back, width, MARGIN.top + plotH);
    const X = (t) => MARGIN.left + (t / end) * plotW;
    const Y = (a) => MARGIN.top + plotH - (Math.min(a, top) / top) * plotH;
    const labels = svg('g', {}, s);
    for (const r of m.rects) {
      const d = r.dataset;
      const lo = Number(d.offset), hi = lo + Number(d.size);
      const x = X(Number(d.start)), w = Math.max(1, X(Number(d.end)) - x);
      const y = Y(hi), h = Math.max(1, Y(lo) - y);
      r.setAttribute('x', x);
      r.setAttribute('y', y);
      r.setAttribute('width', w);
      r.setAttribute('height', h);
      r.setAttribute('fill', bufferFill(d.layer, d.kind));
      if (h >= 12 && w >= 60) {
        const chars = Math.floor((w - 6) / 5.8);
        const name = d.name.length > chars ? d.name.slice(0, Math.max(1, chars - 1)) + '\u2026' : d.name;
        svg('text', { class: 'label', x: x + 3, y: y + Math.min(h / 2 + 4, 13) }, labels).textContent = name;
      }
    }
    if (top < m.capacity) {
      svg('text', { x: MARGIN.left + plotW - 4, y: MARGIN.top + 12, 'text-anchor': 'end' }, labels).textContent =
        `free above, up to the capacity ${bytes(m.capacity)}`;
    }
  }
  function layoutMaps() {
    rangeButton.textContent = wholeCapacity ? 'zoom to the used addresses'
      : `show the whole capacity (${bytes(capacityTop)})`;
    rangeButton.hidden = maps.length === 0 || usedTop >= capacityTop;
    maps.forEach(layoutMap);
  }
  rangeButton.addEventListener('click', () => { wholeCapacity = !wholeCapacity; layoutMaps(); });
  function highlight(id, on) {
    for (const m of maps) {
      for (const r of m.rects) if (r.dataset.id === id) r.classList.toggle('hover', on);
    }
  }
  for (const m of maps) {
    m.svg.addEventListener('mouseover', (event) => {
      const r = event.target.closest && event.target.closest('rect.buffer');
      if (!r) return;
      const d = r.dataset;
      const size = Number(d.size), offset = Number(d.offset);
      highlight(d.id, true);
      showTooltip(`<b>${escapeText(d.name)}</b> [${escapeText(d.id)}]<br>layer ${escapeText(d.layer)}, ` +
        `${escapeText(d.kind)}<br>size ${bytes(size)} (${size} B)<br>offset 0x${offset.toString(16)} (${offset})` +
        (DETAILS[d.id] ? '<br>' + escapeText(DETAILS[d.id]).replace(/\n/g, '<br>') : '') +
        `<br>lifetime ${TIME_UNIT} ${d.start} \u2013 ${d.end} (${Number(d.end) - Number(d.start)})` +
        `<br>${escapeText(m.fig.dataset.space)}, ${escapeText(m.fig.dataset.policy)}`, event);
    });
    m.svg.addEventListener('mousemove', (event) => { if (!tooltip.hidden) moveTooltip(event); });
    m.svg.addEventListener('mouseout', (event) => {
      const r = event.target.closest && event.target.closest('rect.buffer');
      if (r) highlight(r.dataset.id, false);
      hideTooltip();
    });
  }
  // The legend: a colour per layer, an opacity per kind.
  (() => {
    const legend = document.getElementById('legend');
    const layers = new Set();
    const kinds = new Set();
    for (const m of maps) for (const r of m.rects) { layers.add(r.dataset.layer); kinds.add(r.dataset.kind); }
    const order = (a) => (a === 'input' ? [0, 0] : /^(?:layer|request) (\d+)$/.test(a)
      ? [1, Number(/(\d+)$/.exec(a)[1])] : [2, 0]);
    const sorted = [...layers].sort((a, b) => {
      const x = order(a), y = order(b);
      return x[0] - y[0] || x[1] - y[1] || a.localeCompare(b);
    });
    for (const l of sorted) legendItem(legend, layerColour(l), l);
    const kindsLabel = document.createElement('span');
    kindsLabel.textContent = '\u2502 kind, as a tint of the layer\u2019s colour:';
    legend.appendChild(kindsLabel);
    for (const k of [...kinds].sort()) if (k !== 'program') legendItem(legend, tint('#555555', KIND_TINT[k] ?? 0.3), k);
    const free = document.createElement('span');
    free.innerHTML = '<i style="background: repeating-linear-gradient(45deg, #fbfbfb 0 3px, #d4d4d4 3px 5px)"></i>free';
    legend.appendChild(free);
  })();

  // ---- fragmentation curves
  const POLICY_COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2'];
  function layoutCurves() {
    const host = document.getElementById('curves');
    host.textContent = '';
    if (data.series.length === 0) {
      host.innerHTML = '<p class="empty">no allocator samples in fragmentation.csv</p>';
      return;
    }
    const width = Math.max(400, host.clientWidth);
    const charts = [
      { key: 'frag', title: 'external fragmentation', max: 1, binary: false,
        format: (v) => Math.round(v * 100) + '%' },
      { key: 'largest', title: 'largest free block', binary: true, format: bytes },
      { key: 'in_use', title: 'bytes in use', binary: true, format: bytes, dashed: 'live' },
    ];
    const legend = document.createElement('div');
    legend.className = 'legend';
    data.series.forEach((s, i) => legendItem(legend, POLICY_COLOURS[i % POLICY_COLOURS.length],
      `${s.space} \u00b7 ${s.policy}`));
    const dashed = document.createElement('span');
    dashed.textContent = '(bytes in use: solid in use, dashed live)';
    legend.appendChild(dashed);
    host.appendChild(legend);
    for (const c of charts) {
      const height = 170, plotH = height - MARGIN.top - MARGIN.bottom, plotW = width - MARGIN.left - MARGIN.right;
      let max = c.max || 1;
      if (!c.max) {
        for (const s of data.series) for (const v of s[c.key]) max = Math.max(max, v * 1.05);
        const step = ticks(max, 3, c.binary)[1] || max;  // the axis ends on a tick
        max = Math.ceil(max / step) * step;
      }
      const root = svg('svg', { width, height }, host);
      valueAxis(root, width, MARGIN.top, plotH, max, c.binary, c.format, c.title);
      svg('rect', { x: MARGIN.left, y: MARGIN.top, width: plotW, height: plotH, fill: 'none', stroke: '#aaa' }, root);
      timeAxis(root, width, MARGIN.top + plotH);
      const X = (t) => MARGIN.left + (t / end) * plotW;
      const Y = (v) => MARGIN.top + plotH - (v / max) * plotH;
      const step = (values, t) => {
        let d = '';
        for (let i = 0; i < values.length; i++) d += (i === 0 ? `M${X(t[i])},${Y(values[i])}` : `H${X(t[i])}V${Y(values[i])}`);
        return d + `H${X(end)}`;
      };
      data.series.forEach((s, i) => {
        if (s.t.length === 0) return;
        const colour = POLICY_COLOURS[i % POLICY_COLOURS.length];
        svg('path', { d: step(s[c.key], s.t), fill: 'none', stroke: colour, 'stroke-width': 1.6 }, root);
        if (c.dashed) {
          svg('path', { d: step(s[c.dashed], s.t), fill: 'none', stroke: colour, 'stroke-width': 1.2,
            'stroke-dasharray': '5 3' }, root);
        }
      });
    }
  }

  // ---- engine timeline (a canvas: a trace can hold 10^5 slices)
  const LANE_H = 20;
  function sliceColour(label) {
    if (/^wait s\d+$/.test(label)) return '#c9c9c9';
    if (label === 'busy') return '#4e79a7';
    if (label === 'refresh') return '#e15759';
    return paletteColour(label);
  }
  function layoutTimeline() {
    const host = document.getElementById('timeline');
    host.textContent = '';
    const lanes = data.timeline.lanes;
    if (lanes.length === 0) {
      host.innerHTML = '<p class="empty">no engine timeline in this trace</p>';
      return;
    }
    const legend = document.createElement('div');
    legend.className = 'legend';
    for (const label of data.timeline.labels.slice(0, 40)) legendItem(legend, sliceColour(label), label);
    host.appendChild(legend);
    const width = Math.max(400, host.clientWidth);
    const plotW = width - MARGIN.left - MARGIN.right;
    const height = MARGIN.top + lanes.length * LANE_H + 4;
    const canvas = document.createElement('canvas');
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.width = width + 'px';
    canvas.style.height = height + 'px';
    host.appendChild(canvas);
    const ctx = canvas.getContext('2d');
    ctx.scale(ratio, ratio);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    const X = (t) => MARGIN.left + (t / end) * plotW;
    const colours = data.timeline.labels.map(sliceColour);
    lanes.forEach((lane, i) => {
      const y = MARGIN.top + i * LANE_H;
      ctx.fillStyle = i % 2 ? '#f6f6f6' : '#fdfdfd';
      ctx.fillRect(MARGIN.left, y, plotW, LANE_H);
      ctx.fillStyle = '#333';
      ctx.textAlign = 'right';
      ctx.fillText(lane.process === 'core' ? lane.name : `HBM ${lane.name}`, MARGIN.left - 6, y + LANE_H / 2);
      for (let k = 0; k < lane.s.length; k++) {
        const x = X(lane.s[k]);
        ctx.fillStyle = colours[lane.l[k]];
        ctx.fillRect(x, y + 3, Math.max(0.75, X(lane.s[k] + lane.d[k]) - x), LANE_H - 6);
      }
    });
    const axis = svg('svg', { width, height: MARGIN.bottom + 4 }, host);
    timeAxis(axis, width, 2);
    canvas.addEventListener('mousemove', (event) => {
      const box = canvas.getBoundingClientRect();
      const lane = lanes[Math.floor((event.clientY - box.top - MARGIN.top) / LANE_H)];
      const t = ((event.clientX - box.left - MARGIN.left) / plotW) * end;
      if (!lane || t < 0) { hideTooltip(); return; }
      // The last slice starting at or before t (slices are in start order).
      let lo = 0, hi = lane.s.length - 1, found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (lane.s[mid] <= t) { found = mid; lo = mid + 1; } else hi = mid - 1;
      }
      const slack = (end / plotW) * 2;  // two pixels: thin slices can still be pointed at
      if (found < 0 || t > lane.s[found] + lane.d[found] + slack) { hideTooltip(); return; }
      showTooltip(`<b>${escapeText(data.timeline.labels[lane.l[found]])}</b><br>${escapeText(lane.name)}` +
        `<br>cycles ${lane.s[found]} \u2013 ${lane.s[found] + lane.d[found]} (${lane.d[found]})`, event);
    });
    canvas.addEventListener('mouseleave', hideTooltip);
  }

  // ---- sortable tables: a click on a heading sorts by that column (numbers largest first), again reverses
  for (const table of document.querySelectorAll('table.sortable')) {
    const heads = [...table.tHead.rows[0].cells];
    heads.forEach((th, col) => th.addEventListener('click', () => {
      const descending = th.dataset.order !== 'desc';
      for (const h of heads) delete h.dataset.order;
      th.dataset.order = descending ? 'desc' : 'asc';
      const body = table.tBodies[0];
      const key = (row) => {
        const cell = row.cells[col];
        return cell.dataset.sort !== undefined ? Number(cell.dataset.sort) : cell.textContent;
      };
      const rows = [...body.rows].sort((a, b) => {
        const x = key(a), y = key(b);
        const c = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
        return descending ? -c : c;
      });
      for (const r of rows) body.appendChild(r);
    }));
  }

  function layout() {
    layoutMaps();
    layoutCurves();
    layoutTimeline();
  }
  let pending = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(layout);
  });
  layout();
})();
