/* global dagre, document */
/**
 * Draws a workflow's compiled machine (the graph of GET /api/v1/workflows/{id}/statechart)
 * as SVG, laid out by dagre: a box per state, an arrow per transition, a PARALLEL step's
 * branches and a LOOP step's body listed inside the step's box, and machine-level
 * transitions (failure, cancel) from one "any step" node. `highlight` moves the active
 * state without laying the graph out again, so the picture stays still while the workflow
 * moves through it.
 */

const SVG = 'http://www.w3.org/2000/svg';
const LINE = 14;

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

const ANY = '__any_step__';

function boxOf(node) {
  const lines = [node.label];
  if (node.kind) lines.push(node.kind);
  const inner = node.inner
    ? node.inner.steps.map((s) => `${node.inner.group === 'parallel' ? '∥' : '↻'} ${s.name}`)
    : [];
  if (node.inner?.note) inner.push(node.inner.note);
  const widest = Math.max(...[...lines, ...inner].map((l) => l.length), 8);
  return {
    width: Math.min(260, 24 + widest * 7),
    height: 20 + (lines.length + inner.length) * LINE + (node.role === 'step' ? LINE : 0),
    lines,
    inner,
  };
}

/**
 * Render `chart` into `container` (replacing its content). Returns a handle whose
 * `highlight(active, visits)` marks the current state and the visited ones.
 */
export function renderStatechart(container, chart) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 30, ranksep: 42, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  const boxes = new Map();
  for (const node of chart.nodes) {
    const box = boxOf(node);
    boxes.set(node.id, box);
    g.setNode(node.id, { width: box.width, height: box.height });
  }
  const machineEdges = chart.edges.filter((e) => e.from === null && e.event !== 'wf.step.jumped');
  if (machineEdges.length > 0) {
    boxes.set(ANY, { width: 90, height: 28, lines: ['any step'], inner: [] });
    g.setNode(ANY, { width: 90, height: 28 });
  }
  const drawn = [
    ...chart.edges.filter((e) => e.from !== null),
    ...machineEdges.map((e) => ({ ...e, from: ANY, machine: true })),
  ];
  drawn.forEach((edge, i) => {
    const label =
      edge.label ?? (edge.event === 'wf.step.completed' ? '' : edge.event.replace(/^wf\./, ''));
    g.setEdge(
      edge.from,
      edge.to,
      { label, width: Math.min(180, label.length * 6), height: label ? 12 : 0, labelpos: 'c' },
      `e${i}`,
    );
  });
  dagre.layout(g);

  const size = g.graph();
  const svg = el('svg', {
    width: Math.ceil(size.width),
    height: Math.ceil(size.height),
    viewBox: `0 0 ${Math.ceil(size.width)} ${Math.ceil(size.height)}`,
    role: 'img',
    'aria-label': `statechart of ${chart.machine_id}`,
  });
  const defs = el('defs');
  const marker = el('marker', {
    id: 'arrow',
    viewBox: '0 0 10 10',
    refX: 9,
    refY: 5,
    markerWidth: 7,
    markerHeight: 7,
    orient: 'auto-start-reverse',
  });
  marker.append(el('path', { d: 'M 0 0 L 10 5 L 0 10 z' }));
  defs.append(marker);
  svg.append(defs);

  drawn.forEach((edge, i) => {
    const laid = g.edge(edge.from, edge.to, `e${i}`);
    const group = el('g', {
      class: `edge${edge.machine ? ' machine' : ''}`,
      'data-event': edge.event,
    });
    const d = laid.points
      .map((p, k) => `${k === 0 ? 'M' : 'L'} ${p.x.toFixed(1)} ${p.y.toFixed(1)}`)
      .join(' ');
    group.append(el('path', { d, 'marker-end': 'url(#arrow)' }));
    if (laid.label)
      group.append(el('text', { x: laid.x, y: laid.y, 'text-anchor': 'middle' }, laid.label));
    svg.append(group);
  });

  const nodes = new Map();
  for (const id of g.nodes()) {
    const laid = g.node(id);
    const box = boxes.get(id);
    const source = chart.nodes.find((n) => n.id === id);
    const role = source?.role ?? 'any';
    const group = el('g', {
      class: `node ${role}`,
      'data-state': id,
      transform: `translate(${(laid.x - box.width / 2).toFixed(1)}, ${(laid.y - box.height / 2).toFixed(1)})`,
    });
    group.append(el('rect', { width: box.width, height: box.height, rx: 6 }));
    let y = 18;
    box.lines.forEach((line, k) => {
      group.append(el('text', { x: 10, y, class: k === 0 ? 'label' : 'kind' }, line));
      y += LINE;
    });
    for (const line of box.inner) {
      group.append(el('text', { x: 14, y, class: 'inner' }, line));
      y += LINE;
    }
    if (role === 'step') group.append(el('text', { x: 10, y, class: 'sub' }, ''));
    svg.append(group);
    nodes.set(id, group);
  }
  container.replaceChildren(svg);

  return {
    highlight(active, visits = {}) {
      for (const [id, group] of nodes) {
        group.classList.toggle('active', id === active.state);
        group.classList.toggle('visited', id !== active.state && (visits[id] ?? 0) > 0);
        const sub = group.querySelector('text.sub');
        if (sub)
          sub.textContent = id === active.state && active.substate ? `● ${active.substate}` : '';
      }
    },
  };
}
