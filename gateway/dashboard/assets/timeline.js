/* global document */
/**
 * A workflow's step timeline, drawn as SVG from its audit trail (GET
 * /api/v1/workflows/{id}/audit): one horizontal bar per executed step, from its start to
 * its end, on one time axis that starts when the workflow started. A step's end is the
 * time of its STEP_EXECUTED (or STEP_FAILED) event and its start that time minus the
 * duration the event records; a step that ran twice (a retry, a resume) has a bar per run.
 * Bars are at least a few pixels wide, so a step of microseconds stays visible.
 */

const SVG = 'http://www.w3.org/2000/svg';
const ROW = 22;
const LABEL = 150;
const WIDTH = 560;
const MIN_BAR = 3;

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The runs of steps in `events` (audit events, oldest first). */
export function stepRuns(events) {
  const runs = [];
  for (const e of events) {
    if (e.event_type !== 'STEP_EXECUTED' && e.event_type !== 'STEP_FAILED') continue;
    const end = Date.parse(e.timestamp);
    const duration = Number(e.data?.duration_ms);
    const ms = Number.isFinite(duration) && duration >= 0 ? duration : 0;
    runs.push({
      step: e.step_name ?? '?',
      start: end - ms,
      end,
      durationMs: ms,
      failed: e.event_type === 'STEP_FAILED',
      kind: e.data?.kind,
    });
  }
  return runs;
}

const format = (ms) =>
  ms < 1
    ? `${ms.toFixed(3)} ms`
    : ms < 1000
      ? `${ms.toFixed(1)} ms`
      : `${(ms / 1000).toFixed(2)} s`;

/** Draw the timeline of `events` into `container` (replacing its content). */
export function renderTimeline(container, events) {
  const runs = stepRuns(events);
  if (runs.length === 0) {
    const empty = document.createElement('p');
    empty.className = 'note';
    empty.textContent = 'No step has run yet.';
    container.replaceChildren(empty);
    return;
  }
  const started = events.find((e) => e.event_type === 'WORKFLOW_STARTED');
  const t0 = Math.min(
    started ? Date.parse(started.timestamp) : Infinity,
    ...runs.map((r) => r.start),
  );
  const t1 = Math.max(...runs.map((r) => r.end), ...events.map((e) => Date.parse(e.timestamp)));
  const span = Math.max(1, t1 - t0);
  const plot = WIDTH - LABEL - 10;
  const x = (t) => LABEL + ((t - t0) / span) * plot;
  const height = runs.length * ROW + 24;
  // scales with its box; the drawing's own units stay those of a WIDTH-wide picture
  const svg = el('svg', { width: '100%', viewBox: `0 0 ${WIDTH} ${height}` });
  runs.forEach((run, i) => {
    const y = i * ROW + 4;
    const left = x(run.start);
    const width = Math.max(MIN_BAR, x(run.end) - left);
    const g = el('g', {
      class: `bar${run.failed ? ' failed' : ''}`,
      'data-step': run.step,
      'data-duration-ms': run.durationMs,
    });
    g.append(
      el(
        'title',
        {},
        `${run.step}${run.kind ? ` (${run.kind})` : ''}: ${format(run.durationMs)}, started +${format(run.start - t0)}`,
      ),
      el('text', { x: LABEL - 6, y: y + 13, 'text-anchor': 'end', class: 'label' }, run.step),
      el('rect', { x: left, y, width, height: ROW - 8, rx: 2 }),
      // the duration right of the bar, else left of it, else inside it
      left + width + 60 <= WIDTH
        ? el('text', { x: left + width + 4, y: y + 13, class: 'duration' }, format(run.durationMs))
        : left - LABEL >= 60
          ? el(
              'text',
              { x: left - 4, y: y + 13, 'text-anchor': 'end', class: 'duration' },
              format(run.durationMs),
            )
          : el(
              'text',
              { x: left + 4, y: y + 13, class: 'duration inside' },
              format(run.durationMs),
            ),
    );
    svg.append(g);
  });
  const axis = runs.length * ROW + 16;
  svg.append(
    el('line', { x1: LABEL, x2: LABEL + plot, y1: axis - 6, y2: axis - 6, class: 'axis' }),
    el('text', { x: LABEL, y: axis + 6, class: 'tick' }, '0'),
    el(
      'text',
      { x: LABEL + plot, y: axis + 6, 'text-anchor': 'end', class: 'tick' },
      `+${format(span)}`,
    ),
  );
  container.replaceChildren(svg);
}
