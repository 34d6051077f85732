"""The report page's own script and style (html.py embeds them; plotly.js draws the charts).

The page carries its data as one JSON block (``#report-data``). On load the script draws the
charts from it, and again whenever a filter (client, client version, group, run) changes; the
server-rendered tables carry each row's run, client and group as data attributes, and the
same filters hide the rows that do not match. A table's heading sorts it (numbers as numbers).
A run's view (``#run-view``) opens from any "view" link (a rebalance, a violation, a run, the
summary): each group's generations on a time axis with their members, the requests and error
codes around each transition, faults fired and violations where they happened, then the run's
rows as a table.
"""

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1300px;color:#222}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;
border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.82em;margin:.4em 0}
td,th{border:1px solid #ddd;padding:2px 7px;text-align:left;vertical-align:top}
th{background:#f3f3f3;cursor:pointer;white-space:nowrap}th.asc:after{content:" \\25B2"}
th.desc:after{content:" \\25BC"}td.num{text-align:right}.pass{background:#dff0d8}
.fail{background:#f2dede}.note{color:#666;font-size:.85em}
#filters{position:sticky;top:0;background:#fafafa;border:1px solid #ddd;padding:.4em .6em;
z-index:10;font-size:.9em}#filters select{margin-right:.8em;max-width:16em}
.summary{background:#fff8e1;border:1px solid #f0d890;padding:.5em 1em}
.summary li{margin:.2em 0}a.view{cursor:pointer;color:#0645ad;text-decoration:underline}
details>summary{cursor:pointer;color:#0645ad}.chart{width:100%;min-height:320px}
#run-view{border:2px solid #0645ad;padding:.6em;margin-top:1em}
"""

JS = r"""
(function(){
const D = JSON.parse(document.getElementById('report-data').textContent);
const F = {client:'', version:'', group:'', run:''};
const CFG = {displaylogo:false, responsive:true};
const ERR = D.error_names;
const errName = c => (ERR[c] || ('error ' + c));
const cl = r => r.client_name + ' ' + r.client_version;
function keep(r){
  if (F.client && r.client_name !== undefined && r.client_name !== F.client) return false;
  if (F.version && r.client_version !== undefined && r.client_version !== F.version) return false;
  if (F.group && r.group_id !== undefined && r.group_id !== F.group) return false;
  if (F.run && r.run !== undefined && r.run !== F.run) return false;
  return true;
}
function options(id, values){
  const s = document.getElementById(id);
  for (const v of Array.from(new Set(values)).filter(v => v != null).sort()){
    const o = document.createElement('option'); o.value = v; o.textContent = v; s.appendChild(o);
  }
  s.addEventListener('change', () => { F[s.dataset.key] = s.value; redraw(); });
}
// A chart's element made ready for Plotly.react: the note empty() left in it goes, a live plot
// stays -- react updates a plot in place, and emptying its element under it (as every redraw
// once did) left the chart blank after the first filter change or the second run opened.
function plotArea(el){ if (!el._fullLayout) el.innerHTML = ''; return el; }
function empty(id, text){ const e = document.getElementById(id); Plotly.purge(e);
  e.innerHTML = '<p class="note">' + text + '</p>'; }
function durations(){
  const rows = D.rebalances.filter(keep).filter(r => r.duration_ms != null);
  if (!rows.length) return empty('chart-durations', 'no rebalance that reached Stable');
  const by = {};
  for (const r of rows) (by[cl(r)] = by[cl(r)] || []).push(r);
  const traces = Object.keys(by).sort().map(k => ({type:'box', name:k, orientation:'h',
    x: by[k].map(r => r.duration_ms), boxpoints:'all', jitter:0.4, pointpos:0,
    text: by[k].map(r => r.run + ' / ' + r.group_id + ' g' + r.generation),
    hovertemplate:'%{x} ms<br>%{text}<extra>%{fullData.name}</extra>',
    customdata: by[k].map(r => r.run)}));
  const el = plotArea(document.getElementById('chart-durations'));
  Plotly.react(el, traces, {
    title:'PreparingRebalance \u2192 Stable per client (click a point: its run)',
    xaxis:{title:'ms'}, showlegend:false, margin:{l:220}, height:140 + 40*traces.length}, CFG);
  clickOpens(el);
}
function clickOpens(el){
  if (el.removeAllListeners) el.removeAllListeners('plotly_click');
  el.on('plotly_click', ev => openRun(ev.points[0].customdata));
}
function generations(){
  const rows = D.rebalances.filter(keep).filter(r => r.started_ms != null);
  if (!rows.length) return empty('chart-generations', 'no generations to draw');
  const lanes = Array.from(new Set(rows.map(r => r.run + ' / ' + r.group_id))).sort();
  const shown = lanes.slice(0, 40), laneSet = new Set(shown);
  const start = {};
  for (const r of rows) start[r.run] = Math.min(start[r.run] ?? Infinity, r.started_ms);
  const pick = rows.filter(r => laneSet.has(r.run + ' / ' + r.group_id));
  const el = plotArea(document.getElementById('chart-generations'));
  const base = pick.map(r => (r.started_ms - start[r.run]) / 1000);
  const width = pick.map(r => Math.max(((r.stable_ms ?? r.started_ms) - r.started_ms) / 1000,
                                       0.02));
  Plotly.react(el, [{type:'bar', orientation:'h', y: pick.map(r => r.run + ' / ' + r.group_id),
    base: base, x: width, text: barLabels(pick, base, width, el.clientWidth),
    textposition:'outside', cliponaxis:false, customdata: pick.map(r => r.run),
    hovertemplate: pick.map(r => 'generation ' + r.generation + ': ' + (r.reason || '') +
      '<br>members ' + r.members_before + ' \u2192 ' + r.members_after +
      '<br>' + (r.duration_ms == null ? 'did not reach Stable' : r.duration_ms + ' ms') +
      '<extra></extra>'), marker:{color:'#e8842c'}}],
    {title:'Generations per group (bars: PreparingRebalance \u2192 Stable; click: the run)' +
      (lanes.length > shown.length ? ' \u2014 ' + shown.length + ' of ' + lanes.length +
       ' groups; filter to see others' : ''),
     xaxis:{title:"seconds since the run's first rebalance"}, yaxis:{automargin:true,
     type:'category'}, margin:{l:10}, height: 160 + 28*shown.length, barmode:'overlay'}, CFG);
  clickOpens(el);
}
// Each generation's bar is labelled after its end ('g7 (3)': generation, members after); where
// a lane's generations follow each other closer than their labels are wide (a burst of
// rebalances within a few ms), the first bar of the burst names the range ('g1\u201315 (3)')
// and the others stay unlabelled (their hover still says all), so no labels overlap.
function barLabels(pick, base, width, pixels){
  let lo = Infinity, hi = -Infinity;
  pick.forEach((r, i) => { lo = Math.min(lo, base[i]); hi = Math.max(hi, base[i] + width[i]); });
  // a text's width in seconds of the axis: measured in Plotly's default font, with the plot
  // about the chart's width less the lanes' names (the y axis) and Plotly's right margin
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = '12px "Open Sans", verdana, arial, sans-serif';
  const names = Array.from(new Set(pick.map(r => r.run + ' / ' + r.group_id)));
  const axis = Math.max(0, ...names.map(n => ctx.measureText(n).width)) + 30;
  const seconds = Math.max(hi - lo, 0.001) / Math.max(pixels - axis - 80, 100);
  const wide = text => (ctx.measureText(text).width + 6) * seconds;
  const labels = pick.map(() => ''), lanes = {};
  pick.forEach((r, i) => (lanes[r.run + ' / ' + r.group_id] ||= []).push(i));
  for (const lane of Object.values(lanes)){
    lane.sort((a, b) => base[a] - base[b]);
    let first = -1, freeFrom = -Infinity;
    for (const i of lane){
      const r = pick[i];
      if (first < 0 || base[i] >= freeFrom){
        first = i;
        labels[i] = 'g' + r.generation + ' (' + r.members_after + ')';
      } else {
        labels[first] = 'g' + pick[first].generation + '\u2013' + r.generation + ' (' +
          r.members_after + ')';
      }
      freeFrom = Math.max(freeFrom, base[first] + width[first] + wide(labels[first]),
                          base[i] + width[i]);
    }
  }
  return labels;
}
function heat(id, rows, value, label, title, colors){
  rows = rows.filter(keep);
  if (!rows.length) return empty(id, 'nothing to draw');
  const ys = Array.from(new Set(rows.map(cl))).sort();
  const xs = Array.from(new Set(rows.map(r => r.api))).sort();
  const z = ys.map(() => xs.map(() => null)), t = ys.map(() => xs.map(() => ''));
  for (const r of rows){
    const i = ys.indexOf(cl(r)), j = xs.indexOf(r.api);
    z[i][j] = value(z[i][j], r); t[i][j] = label(t[i][j], r);
  }
  const el = plotArea(document.getElementById(id));
  Plotly.react(el, [{type:'heatmap', x:xs, y:ys, z:z, text:t, colorscale:colors,
    hovertemplate:'%{y}<br>%{x}<br>%{text}<extra></extra>', hoverongaps:false,
    texttemplate: xs.length * ys.length <= 120 ? '%{z}' : '', xgap:1, ygap:1}],
    {title:title, xaxis:{tickangle:-35, automargin:true}, yaxis:{automargin:true},
     height: 220 + 32*ys.length}, CFG);
}
function redraw(){
  durations(); generations();
  heat('chart-errors', D.client_errors, (z, r) => (z || 0) + r.responses,
       (t, r) => t + (t ? '<br>' : '') + errName(r.error_code) + ': ' + r.responses,
       'Error responses, client \u00d7 API (hover: which codes)', 'Reds');
  heat('chart-versions', D.api_versions, (z, r) => Math.max(z ?? -1, r.version),
       (t, r) => 'v' + r.version + ' (' + r.requests + ' requests); broker max ' +
         (r.broker_max ?? '?') + (t ? '<br>' + t : ''),
       'Highest API version used per client version (hover: the broker\'s maximum)', 'Viridis');
  for (const tr of document.querySelectorAll('tr[data-row]')){
    const r = JSON.parse(tr.dataset.row);
    tr.style.display = keep(r) ? '' : 'none';
  }
  for (const c of document.querySelectorAll('[data-count]')){
    const t = document.getElementById(c.dataset.count);
    const all = t.querySelectorAll('tr[data-row]');
    const vis = Array.from(all).filter(tr => tr.style.display !== 'none').length;
    c.textContent = vis + ' of ' + all.length + ' rows shown';
  }
}
function sortable(){
  for (const th of document.querySelectorAll('table.sortable th')){
    th.addEventListener('click', () => {
      const table = th.closest('table'), i = Array.from(th.parentNode.children).indexOf(th);
      const asc = !th.classList.contains('asc');
      for (const h of th.parentNode.children) h.classList.remove('asc', 'desc');
      th.classList.add(asc ? 'asc' : 'desc');
      const body = table.tBodies[0], rows = Array.from(body.rows);
      const val = tr => { const c = tr.cells[i]; const s = c ? c.textContent : '';
        const n = parseFloat(s); return (s !== '' && !isNaN(n) && /^[-0-9.e+]+$/.test(s.trim()))
          ? n : s; };
      rows.sort((a, b) => { const x = val(a), y = val(b);
        const o = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0)
          : (typeof x === 'number' ? -1 : 1); return asc ? o : -o; });
      for (const r of rows) body.appendChild(r);
    });
  }
}
function openRun(run){
  if (!run) return;
  const view = document.getElementById('run-view');
  view.style.display = '';
  document.getElementById('run-title').textContent = 'Run ' + run;
  const rows = D.timeline.filter(r => r.run === run);
  const note = document.getElementById('run-note');
  const chart = document.getElementById('chart-run');
  const vio = D.violations.filter(v => v.run === run);
  if (!rows.length){
    note.textContent = D.timeline_runs.includes(run) ? 'no group events in this run' :
      'this run\'s timeline is not on the page (the page carries ' + D.timeline_runs.length +
      ' runs\' timelines: the worst runs and those with violations first)';
    Plotly.purge(chart); chart.innerHTML = '';
  } else {
    note.textContent = rows.length + ' events: the group transitions, faults fired, and ' +
      'the membership requests and error answers around them (heartbeats and commits ' +
      'answered without error are left out)';
    drawRun(chart, rows, vio);
  }
  const body = document.querySelector('#run-table tbody');
  body.innerHTML = '';
  for (const r of rows.concat(vio.map(v => Object.assign({kind:'violation: ' + v.kind}, v)))
      .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0))){
    const tr = document.createElement('tr');
    const what = r.kind === 'request' ? r.api + (r.err ? ' \u2192 ' + errName(r.err) : '') :
      r.kind.startsWith('violation') ? r.detail :
      [r.state, r.reason, r.action, r.api, r.members ? 'members: ' + r.members.join(', ') :
       null].filter(x => x).join('; ');
    for (const v of [r.seq, r.at_ms, r.kind, r.group_id, r.member_id, r.generation, what]){
      const td = document.createElement('td'); td.textContent = v == null ? '' : v;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  view.scrollIntoView();
}
function drawRun(el, rows, vio){
  const t0 = Math.min(...rows.map(r => r.at_ms));
  const end = Math.max(...rows.map(r => r.at_ms));
  const s = ms => (ms - t0) / 1000;
  const groups = Array.from(new Set(rows.filter(r => r.group_id).map(r => r.group_id))).sort();
  const traces = [];
  for (const g of groups){
    const gens = rows.filter(r => r.group_id === g && r.kind === 'generation_changed');
    gens.forEach((r, i) => {
      const until = i + 1 < gens.length ? gens[i + 1].at_ms : end;
      traces.push({type:'bar', orientation:'h', y:[g], base:[s(r.at_ms)],
        x:[Math.max(s(until) - s(r.at_ms), 0.02)], showlegend:false, opacity:0.55,
        marker:{color: i % 2 ? '#6baed6' : '#2171b5'},
        text:['g' + r.generation + ': ' + (r.members || []).length + ' members'],
        textposition:'inside', insidetextanchor:'start',
        hovertemplate:'generation ' + r.generation + '<br>members: ' +
          (r.members || []).join(', ') + '<extra></extra>'});
    });
  }
  const marks = (name, pick, symbol, color, label) => {
    const rs = rows.filter(pick);
    if (rs.length) traces.push({type:'scatter', mode:'markers', name:name,
      x: rs.map(r => s(r.at_ms)), y: rs.map(r => r.group_id || '(no group)'),
      marker:{symbol:symbol, color:color, size:10, line:{width:1, color:'#333'}},
      text: rs.map(label), hovertemplate:'%{text}<extra>' + name + '</extra>'});
  };
  marks('state changes', r => r.kind === 'state_changed' || r.kind === 'rebalance_triggered',
        'line-ns-open', '#555', r => r.kind === 'state_changed' ? '\u2192 ' + r.state :
        'rebalance: ' + (r.reason || ''));
  marks('members added / removed', r => r.kind === 'member_added' || r.kind === 'member_removed',
        'triangle-up', '#74c476', r => r.kind.replace('_', ' ') + ' ' + (r.member_id || '') +
        (r.reason ? ' (' + r.reason + ')' : ''));
  marks('membership requests', r => r.kind === 'request' && !r.err, 'circle', '#bbb',
        r => r.api + ' from ' + (r.member_id || '(new member)'));
  marks('error answers', r => r.kind === 'request' && r.err, 'x', '#d62728',
        r => r.api + ' \u2192 ' + errName(r.err) + ' (' + (r.member_id || '') + ')');
  marks('faults fired', r => r.kind === 'fault_fired', 'diamond', '#ff7f0e',
        r => 'fault: ' + (r.action || '') + ' on ' + (r.api || ''));
  if (vio.length) traces.push({type:'scatter', mode:'markers', name:'violations',
    x: vio.map(v => s(v.at_ms ?? t0)), y: vio.map(v => v.group_id || '(no group)'),
    marker:{symbol:'star', size:16, color:'#000'},
    text: vio.map(v => v.kind + ': ' + v.detail), hovertemplate:'%{text}<extra>violation</extra>'});
  plotArea(el);
  Plotly.react(el, traces, {barmode:'overlay', height: 220 + 60*Math.max(groups.length, 1),
    xaxis:{title:'seconds since the first event shown'}, yaxis:{type:'category',
    automargin:true}, legend:{orientation:'h'}, title:'Groups and generations'}, CFG);
}
window.kafkaEmuOpenRun = openRun;
document.addEventListener('click', ev => {
  const a = ev.target.closest('[data-open-run]');
  if (a){ ev.preventDefault(); openRun(a.dataset.openRun); }
});
options('f-client', D.filters.client); options('f-version', D.filters.version);
options('f-group', D.filters.group); options('f-run', D.filters.run);
document.getElementById('f-reset').addEventListener('click', () => {
  for (const s of document.querySelectorAll('#filters select')){
    s.value = ''; F[s.dataset.key] = '';
  }
  redraw();
});
// the generations' labels are laid out for the chart's width (barLabels): again when it changes
let resized = null;
window.addEventListener('resize', () => {
  clearTimeout(resized); resized = setTimeout(generations, 200);
});
sortable(); redraw();
document.body.dataset.ready = '1';
})();
"""
