/* global document, window, sessionStorage, fetch, setTimeout, clearTimeout, URLSearchParams, navigator */
/**
 * The operator dashboard: sign in with an API token, then the overview (trend charts of the
 * last 10 or 60 minutes), fleet, workflows (with step timeline, audit trail and live
 * statechart) and commands, all read from /api/v1 with that token. Every value from the
 * API is inserted as text, never as markup. Views refresh on a short timer while they are
 * shown; the workflow view polls its statechart and moves the highlight as the workflow
 * moves.
 */
import { trendCharts } from './charts.js';
import { renderStatechart } from './statechart.js';
import { renderTimeline } from './timeline.js';

const TOKEN_KEY = 'saffron.token';
const main = document.getElementById('main');
let timer;
let viewSerial = 0;

/** An element with attributes and children (strings become text nodes). */
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'class') node.className = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return node;
}

/**
 * A workflow id as a table shows it: its last 12 hex digits (ids are time-ordered UUIDv7,
 * so ids of the same second share their first digits and differ at the end), the full id
 * on hover, and a button that copies it.
 */
function idCell(id) {
  const copy = h(
    'button',
    {
      type: 'button',
      class: 'copy secondary',
      title: 'copy the full id',
      'aria-label': `copy ${id}`,
      onclick: (event) => {
        event.stopPropagation();
        void navigator.clipboard?.writeText(id).then(
          () => (copy.textContent = '✓'),
          () => (copy.textContent = '✗'),
        );
      },
    },
    'copy',
  );
  return h('td', { class: 'id', title: id }, h('code', {}, `…${id.slice(-12)}`), ' ', copy);
}

const statusBadge = (status) => h('span', { class: `status status-${status}` }, status);
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');

class ApiError extends Error {
  constructor(status, body) {
    super(body?.detail ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code;
  }
}

async function api(path, init = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const response = await fetch(path, {
    ...init,
    headers: {
      ...(init.body ? { 'content-type': 'application/json' } : {}),
      authorization: `Bearer ${token}`,
    },
  });
  if (response.status === 204) return undefined;
  const body = await response.json().catch(() => undefined);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

/** Re-run `load` every `ms` while this view is shown. */
function refresh(serial, ms, load) {
  const tick = async () => {
    if (serial !== viewSerial) return;
    try {
      await load();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 401) {
        // the token was revoked or expired: back to sign-in
        sessionStorage.removeItem(TOKEN_KEY);
        route();
        return;
      }
    }
    if (serial === viewSerial) timer = setTimeout(tick, ms);
  };
  void tick();
}

function showLogin(message) {
  document.getElementById('nav').hidden = true;
  document.getElementById('logout').hidden = true;
  document.getElementById('who').textContent = '';
  const input = h('input', {
    type: 'password',
    id: 'token',
    placeholder: 'saf_…',
    autocomplete: 'off',
  });
  const error = h('p', { class: 'error', id: 'login-error' }, message ?? '');
  const form = h(
    'form',
    {
      class: 'login',
      onsubmit: async (event) => {
        event.preventDefault();
        sessionStorage.setItem(TOKEN_KEY, input.value.trim());
        try {
          await api('/api/v1/workflows?limit=1');
          window.location.hash = '#/fleet';
          route();
        } catch (e) {
          sessionStorage.removeItem(TOKEN_KEY);
          error.textContent = e.status === 401 ? 'That token is not valid.' : e.message;
        }
      },
    },
    h('h1', {}, 'Operator sign-in'),
    h(
      'p',
      { class: 'note' },
      'Paste an API token (saffron users create --role viewer|operator|admin).',
    ),
    input,
    error,
    h('button', { type: 'submit', id: 'login' }, 'Sign in'),
  );
  main.replaceChildren(form);
  input.focus();
}

const WINDOWS = [
  ['10m', 'last 10 minutes (10 s buckets)'],
  ['60m', 'last hour (1 min buckets)'],
];

function overviewView(serial, params) {
  const window_ = WINDOWS.some(([w]) => w === params.get('window')) ? params.get('window') : '10m';
  const picker = h(
    'div',
    { class: 'filters', id: 'trend-window' },
    WINDOWS.map(([w, label]) =>
      h(
        'a',
        { href: `#/overview?window=${w}`, class: w === window_ ? 'current' : '', 'data-window': w },
        label,
      ),
    ),
  );
  const charts = h('div', { class: 'trends', id: 'trends' });
  const stamp = h('p', { class: 'note', id: 'trends-read-at' });
  main.replaceChildren(
    h('h1', {}, 'Overview'),
    picker,
    charts,
    stamp,
    h(
      'p',
      { class: 'note' },
      'Counts are per bucket; backlog and devices are the last reading in each bucket. What each chart counts: docs/guides/dashboard.md.',
    ),
  );
  const update = trendCharts(charts);
  refresh(serial, 5000, async () => {
    const data = await api(`/api/v1/metrics/series?window=${window_}`);
    if (serial !== viewSerial) return;
    update(data);
    charts.dataset.readAt = data.read_at;
    stamp.textContent = `Read ${when(data.read_at)}.`;
  });
}

function fleetView(serial) {
  const cards = h('div', { class: 'cards' });
  const rows = h('tbody');
  main.replaceChildren(
    h('h1', {}, 'Fleet'),
    cards,
    h(
      'table',
      { id: 'devices' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Device', 'Type', 'Location', 'Status', 'SAF backlog', 'Last sync', 'Last seen'].map(
            (t) => h('th', {}, t),
          ),
        ),
      ),
      rows,
    ),
  );
  refresh(serial, 2000, async () => {
    const { devices } = await api('/api/v1/devices?limit=500');
    const count = (status) => devices.filter((d) => d.status === status).length;
    const backlog = devices.reduce(
      (sum, d) => sum + (Number(d.metrics?.pending_transactions) || 0),
      0,
    );
    cards.replaceChildren(
      ...[
        ['devices', devices.length],
        ['online', count('ONLINE')],
        ['syncing', count('SYNCING')],
        ['offline', count('OFFLINE')],
        ['SAF backlog', backlog],
      ].map(([label, n]) =>
        h('div', { class: 'card' }, h('div', { class: 'n' }, n), h('div', { class: 'l' }, label)),
      ),
    );
    rows.replaceChildren(
      ...devices.map((d) =>
        h(
          'tr',
          {
            class: 'link',
            'data-device': d.device_id,
            onclick: () => (window.location.hash = `#/devices/${encodeURIComponent(d.device_id)}`),
          },
          h('td', {}, d.device_id),
          h('td', {}, d.device_type ?? ''),
          h('td', {}, d.location ?? ''),
          h('td', {}, statusBadge(d.status)),
          h('td', {}, String(d.metrics?.pending_transactions ?? '—')),
          h('td', {}, when(d.last_sync ?? d.metrics?.last_sync)),
          h('td', {}, when(d.last_seen)),
        ),
      ),
    );
  });
}

const COMMAND_TYPES = [
  'DIAGNOSTIC',
  'UPDATE_CONFIG',
  'SYNC_TRANSACTIONS',
  'REBOOT',
  'update_workflow',
  'sync_wasm',
];

function commandTable(commands) {
  return h(
    'table',
    { class: 'commands' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Command', 'Type', 'Status', 'Retries', 'Created', 'Result'].map((t) => h('th', {}, t)),
      ),
    ),
    h(
      'tbody',
      {},
      commands.map((c) =>
        h(
          'tr',
          { 'data-command': c.command_id },
          h('td', {}, c.command_id.slice(0, 8)),
          h('td', {}, c.command_type),
          h('td', {}, statusBadge(c.status)),
          h('td', {}, `${c.retry_count ?? 0}/${c.max_retries ?? 0}`),
          h('td', {}, when(c.created_at)),
          h(
            'td',
            {},
            c.error ??
              (c.result === null || c.result === undefined ? '' : JSON.stringify(c.result)),
          ),
        ),
      ),
    ),
  );
}

function deviceView(serial, deviceId) {
  const info = h('div');
  const commands = h('div', { id: 'device-commands' });
  const type = h(
    'select',
    { id: 'command-type' },
    COMMAND_TYPES.map((t) => h('option', { value: t }, t)),
  );
  const payload = h('textarea', { id: 'command-payload', rows: 3 }, '{}');
  const message = h('p', { class: 'note', id: 'command-message' });
  const send = h(
    'form',
    {
      id: 'command-form',
      onsubmit: async (event) => {
        event.preventDefault();
        let body;
        try {
          body = JSON.parse(payload.value || '{}');
        } catch {
          message.textContent = 'The payload is not valid JSON.';
          return;
        }
        try {
          const created = await api(`/api/v1/devices/${encodeURIComponent(deviceId)}/commands`, {
            method: 'POST',
            body: JSON.stringify({ command_type: type.value, payload: body }),
          });
          message.textContent = `Command ${created.command_id} created (${created.status}).`;
          await load();
        } catch (e) {
          message.textContent = `Refused: ${e.message}`;
        }
      },
    },
    h('h2', {}, 'Send a command'),
    h(
      'div',
      { class: 'filters' },
      type,
      h('button', { type: 'submit', id: 'send-command' }, 'Send'),
    ),
    payload,
    message,
  );
  const load = async () => {
    const [device, list] = await Promise.all([
      api(`/api/v1/devices/${encodeURIComponent(deviceId)}`),
      api(`/api/v1/devices/${encodeURIComponent(deviceId)}/commands?limit=50`),
    ]);
    info.replaceChildren(
      h(
        'div',
        { class: 'cards' },
        [
          ['status', statusBadge(device.status)],
          ['SAF backlog', String(device.metrics?.pending_transactions ?? '—')],
          ['last sync', when(device.last_sync)],
          ['last seen', when(device.last_seen)],
          ['firmware', device.firmware_version ?? '—'],
        ].map(([l, n]) =>
          h('div', { class: 'card' }, h('div', { class: 'n' }, n), h('div', { class: 'l' }, l)),
        ),
      ),
      h('pre', {}, JSON.stringify(device.metrics ?? {}, null, 2)),
    );
    commands.replaceChildren(h('h2', {}, 'Commands'), commandTable(list.commands));
  };
  main.replaceChildren(
    h('h1', {}, `Device ${deviceId}`),
    info,
    h('div', { class: 'split' }, commands, send),
  );
  refresh(serial, 2000, load);
}

function workflowsView(serial, params) {
  const status = h(
    'select',
    { id: 'filter-status' },
    [
      '',
      'ACTIVE',
      'PENDING_ASYNC',
      'WAITING_HUMAN_INPUT',
      'WAITING_CHILD',
      'COMPLETED',
      'FAILED',
      'FAILED_ROLLED_BACK',
      'CANCELLED',
    ].map((s) =>
      h('option', { value: s, selected: s === (params.get('status') ?? '') }, s || 'any status'),
    ),
  );
  const type = h('input', {
    type: 'text',
    id: 'filter-type',
    placeholder: 'workflow type',
    value: params.get('type') ?? '',
  });
  const apply = () => {
    const q = new URLSearchParams();
    if (status.value) q.set('status', status.value);
    if (type.value.trim()) q.set('type', type.value.trim());
    window.location.hash = `#/workflows?${q}`;
  };
  status.addEventListener('change', apply);
  type.addEventListener('change', apply);
  const rows = h('tbody');
  main.replaceChildren(
    h('h1', {}, 'Workflows'),
    h('div', { class: 'filters' }, status, type),
    h(
      'table',
      { id: 'workflows' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Workflow', 'Type', 'Status', 'Step', 'Updated'].map((t) => h('th', {}, t)),
        ),
      ),
      rows,
    ),
  );
  refresh(serial, 2000, async () => {
    const q = new URLSearchParams({ limit: '100' });
    if (params.get('status')) q.set('status', params.get('status'));
    if (params.get('type')) q.set('workflow_type', params.get('type'));
    const { items: workflows } = await api(`/api/v1/workflows?${q}`);
    rows.replaceChildren(
      ...workflows.map((w) =>
        h(
          'tr',
          {
            class: 'link',
            'data-workflow': w.id,
            onclick: () => (window.location.hash = `#/workflows/${w.id}`),
          },
          idCell(w.id),
          h('td', {}, w.workflow_type),
          h('td', {}, statusBadge(w.status)),
          h('td', {}, w.current_step ?? ''),
          h('td', {}, when(w.updated_at)),
        ),
      ),
    );
  });
}

function workflowView(serial, id) {
  const header = h('div');
  const chartBox = h('div', { class: 'chart', id: 'statechart' });
  const state = h('pre', { id: 'workflow-state' });
  const timeline = h('ol', { class: 'timeline', id: 'audit' });
  const steps = h('div', { class: 'chart steps', id: 'step-timeline' });
  main.replaceChildren(
    h('h1', {}, `Workflow ${id}`),
    header,
    h(
      'div',
      { class: 'split' },
      h(
        'div',
        {},
        h('h2', {}, 'Statechart'),
        chartBox,
        h(
          'p',
          { class: 'legend' },
          'Highlighted: current state. Green: visited. Dashed: taken from any step (failure, cancel).',
        ),
      ),
      h(
        'div',
        {},
        h('h2', {}, 'Step timeline'),
        steps,
        h(
          'p',
          { class: 'legend' },
          'One bar per step run: where it started after the workflow did, and how long it ran. Red: failed.',
        ),
      ),
    ),
    h(
      'div',
      { class: 'split' },
      h('div', {}, h('h2', {}, 'State'), state),
      h('div', {}, h('h2', {}, 'Audit trail'), timeline),
    ),
  );
  let drawn;
  let hash;
  let version = -1;
  refresh(serial, 1000, async () => {
    const chart = await api(`/api/v1/workflows/${id}/statechart`);
    if (chart.version === version) return;
    version = chart.version;
    if (chart.machine.definition_hash !== hash) {
      hash = chart.machine.definition_hash;
      drawn = renderStatechart(chartBox, chart.machine);
    }
    drawn.highlight(chart.active, chart.visits ?? {});
    const w = chart.workflow;
    header.replaceChildren(
      h(
        'div',
        { class: 'cards' },
        [
          ['status', h('span', { id: 'workflow-status' }, statusBadge(w.status))],
          ['type', w.workflow_type],
          ['step', w.current_step ?? '—'],
          ['version', String(chart.version)],
        ].map(([l, n]) =>
          h('div', { class: 'card' }, h('div', { class: 'n' }, n), h('div', { class: 'l' }, l)),
        ),
      ),
    );
    state.textContent = JSON.stringify(w.state, null, 2);
    const { events } = await api(`/api/v1/workflows/${id}/audit`);
    renderTimeline(steps, events);
    timeline.replaceChildren(
      ...events.map((e) =>
        h(
          'li',
          {},
          h('time', {}, when(e.timestamp)),
          h('strong', {}, e.event_type),
          e.step_name ? ` ${e.step_name}` : '',
        ),
      ),
    );
  });
}

function broadcastTable(broadcasts) {
  return h(
    'table',
    { class: 'broadcasts' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Broadcast', 'Command', 'Status', 'Phase', 'Progress', 'Failed', 'Created'].map((t) =>
          h('th', {}, t),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      broadcasts.map((b) => {
        const done = b.succeeded_count + b.failed_count;
        const percent = b.total_devices ? Math.round((100 * done) / b.total_devices) : 0;
        return h(
          'tr',
          { 'data-broadcast': b.broadcast_id },
          h('td', {}, b.broadcast_id.slice(0, 8)),
          h('td', {}, b.command_type),
          h('td', {}, statusBadge(b.status), b.halt_reason ? ` ${b.halt_reason}` : ''),
          h('td', {}, `${b.current_phase}/${b.phase_count}`),
          h(
            'td',
            { class: 'progress', title: `${done} of ${b.total_devices} devices settled` },
            h('progress', { max: '100', value: String(percent) }),
            ` ${done}/${b.total_devices}`,
          ),
          h('td', {}, String(b.failed_count)),
          h('td', {}, when(b.created_at)),
        );
      }),
    ),
  );
}

function commandsView(serial) {
  const rollouts = h('div', { id: 'broadcasts' });
  const box = h('div', { id: 'all-commands' });
  main.replaceChildren(
    h('h1', {}, 'Commands'),
    h('h2', {}, 'Broadcasts'),
    rollouts,
    h('h2', {}, 'Latest commands'),
    h('p', { class: 'note' }, 'Latest commands of every device (open a device to send one).'),
    box,
  );
  refresh(serial, 2000, async () => {
    const { broadcasts } = await api('/api/v1/command-broadcasts?limit=20');
    rollouts.replaceChildren(
      broadcasts.length
        ? broadcastTable(broadcasts)
        : h('p', { class: 'note' }, 'No broadcast yet.'),
    );
    const { devices } = await api('/api/v1/devices?limit=100');
    const lists = await Promise.all(
      devices.map((d) =>
        api(`/api/v1/devices/${encodeURIComponent(d.device_id)}/commands?limit=10`).then((r) =>
          r.commands.map((c) => ({ ...c, device_id: d.device_id })),
        ),
      ),
    );
    const all = lists
      .flat()
      .sort((a, b) => (a.created_at < b.created_at ? 1 : -1))
      .slice(0, 100);
    box.replaceChildren(commandTable(all));
  });
}

function route() {
  viewSerial += 1;
  clearTimeout(timer);
  if (!sessionStorage.getItem(TOKEN_KEY)) return showLogin();
  document.getElementById('nav').hidden = false;
  document.getElementById('logout').hidden = false;
  const [path, query] = window.location.hash.replace(/^#/, '').split('?');
  const parts = (path || '/fleet').split('/').filter(Boolean);
  for (const a of document.querySelectorAll('nav a'))
    a.classList.toggle('current', a.dataset.nav === parts[0]);
  const serial = viewSerial;
  if (parts[0] === 'overview') return overviewView(serial, new URLSearchParams(query ?? ''));
  if (parts[0] === 'workflows' && parts[1]) return workflowView(serial, parts[1]);
  if (parts[0] === 'workflows') return workflowsView(serial, new URLSearchParams(query ?? ''));
  if (parts[0] === 'devices' && parts[1]) return deviceView(serial, decodeURIComponent(parts[1]));
  if (parts[0] === 'commands') return commandsView(serial);
  return fleetView(serial);
}

document.getElementById('logout').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  route();
});
window.addEventListener('hashchange', route);
route();
