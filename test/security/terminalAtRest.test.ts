/**
 * No card number at rest in clear on the terminal: a real edge agent (its SQLite file, its
 * local API on loopback) runs workflows whose steps put card numbers everywhere a step can —
 * in the state it returns, in the message of an error it throws (which the engine copies
 * into the workflow's error, its STEP_FAILED and WORKFLOW_FAILED audit rows and the local
 * API's answer), in log lines and their data, and in the result of an ASYNC task — and the
 * test then reads the terminal's database, its WAL and its shared-memory file byte by byte
 * for those numbers, printed every way a card is (one run of digits, groups joined by spaces
 * or dashes), in ASCII and in UTF-16. None may be there; the agent's log and every local API
 * answer may not carry one either.
 *
 * The rule checked: a step that leaves a card number in the state fails with
 * CARD_DATA_IN_STATE and the state it left is not kept; everything else is kept masked (all
 * digits but the last four). The database files are 0600 in a 0700 folder, as are the card
 * key and the local API token.
 */
import Database from 'better-sqlite3';
import { createServer } from 'node:net';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEdgeAgent,
  createLocalApi,
  loadCardKey,
  loadLocalToken,
  type AgentLogEntry,
  type EdgeAgent,
  type LocalApi,
} from '../../edge/index.js';
import { ephemeralKeyring } from '../../gateway/index.js';
import { luhnValid } from '../../runtime/index.js';
import { waitFor } from '../support/edgeProcesses.js';

type Json = Record<string, unknown>;

/** Test card numbers, each with the printed forms a step writes it in. */
const CARDS = {
  state: { pan: '4111111111111111', printed: '4111 1111 1111 1111' },
  error: { pan: '5500000000000004', printed: '5500-0000-0000-0004' },
  log: { pan: '378282246310005', printed: '3782 822463 10005' },
  logData: { pan: '6011111111111117', printed: '6011-1111-1111-1117' },
  task: { pan: '4012888888881881', printed: '4012 8888 8888 1881' },
  key: { pan: '4222222222222', printed: '4222222222222' },
} as const;

const STEPS = `
export function state_pan() {
  return { receipt: { pan: '${CARDS.state.printed}' }, card_number: ${CARDS.state.pan} };
}
export function throw_pan() {
  throw new Error('acquirer declined card ${CARDS.error.printed} for the amount; pan=${CARDS.error.pan}');
}
export function log_pan(state, context) {
  context.log('card read ${CARDS.log.printed}', { pan: '${CARDS.logData.printed}' });
  context.log.warn('track data ${CARDS.log.pan}', { track: '${CARDS.logData.pan}' });
  return { logged: true };
}
export function task_pan() {
  return { pan: '${CARDS.task.printed}' };
}
`;

const WORKFLOWS: Record<string, string> = {
  leak_state: 'steps: [{ name: keep, type: STANDARD, function: leak.state_pan }]',
  leak_error: 'steps: [{ name: charge, type: STANDARD, function: leak.throw_pan }]',
  leak_log: 'steps: [{ name: read, type: STANDARD, function: leak.log_pan }]',
  leak_task: 'steps: [{ name: score, type: ASYNC, function: leak.task_pan }]',
};

/** Every byte sequence a card number may be stored as: its printed forms, ASCII and UTF-16. */
function panNeedles(card: { pan: string; printed: string }): Buffer[] {
  const groups = card.pan.match(/.{1,4}/g)!;
  const forms = new Set([card.pan, card.printed, groups.join(' '), groups.join('-')]);
  const needles: Buffer[] = [];
  for (const form of forms) {
    const le = Buffer.from(form, 'utf16le');
    const be = Buffer.from(le).swap16();
    needles.push(Buffer.from(form, 'latin1'), le, be);
  }
  return needles;
}

/** The card numbers found in `bytes`, by name. */
function cardsIn(bytes: Buffer): string[] {
  return Object.entries(CARDS)
    .filter(([, card]) => panNeedles(card).some((needle) => bytes.includes(needle)))
    .map(([name]) => name);
}

/** A port on loopback that nothing listens on (the agent works offline). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a terminal keeps no card number in clear at rest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-at-rest-'));
  const dataDir = join(dir, 'data');
  const dbPath = join(dataDir, 'db', 'edge.db');
  const cardKeyFile = join(dataDir, 'card.key');
  const tokenFile = join(dataDir, 'local-token');
  const logged: AgentLogEntry[] = [];
  const answers: string[] = [];
  let agent: EdgeAgent;
  let api: LocalApi;
  let url = '';
  let token = '';

  const call = async (path: string, body?: Json) => {
    const res = await fetch(`${url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    answers.push(text);
    return { status: res.status, body: JSON.parse(text) as Json };
  };
  const run = (workflowType: string, extra: Json = {}) =>
    call('/local/v1/workflows', { workflow_type: workflowType, data: {}, ...extra });

  beforeAll(async () => {
    for (const card of Object.values(CARDS)) expect(luhnValid(card.pan)).toBe(true);
    const folder = join(dir, 'workflows');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'leak.js'), STEPS);
    for (const [type, steps] of Object.entries(WORKFLOWS))
      writeFileSync(
        join(folder, `${type}.yaml`),
        `workflow_type: ${type}\nworkflow_version: '1'\n${steps}\n`,
      );
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    token = loadLocalToken(tokenFile).token;
    agent = createEdgeAgent({
      deviceId: 'pos-at-rest-1',
      deviceSecret: 'at-rest-test-secret-0123456789abcdef',
      cloudUrl: `http://127.0.0.1:${await closedPort()}`,
      dbPath,
      cardKey: loadCardKey(cardKeyFile).key,
      stepsRoot: folder,
      workflowDirs: [folder],
      cloudPublicKeyPem: ephemeralKeyring().publicKeyPem,
      log: (entry) => logged.push(entry),
    });
    await agent.start();
    api = createLocalApi({ agent, token });
    url = await api.listen(0);
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await agent?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails a step that leaves a card number in the state with CARD_DATA_IN_STATE', async () => {
    const answer = await run('leak_state');
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      status: 'FAILED',
      error: { code: 'CARD_DATA_IN_STATE', step: 'keep' },
    });
    expect(answer.body.state).not.toHaveProperty('receipt');
    expect(answer.body.state).not.toHaveProperty('card_number');
  });

  it('keeps an error that quotes a card number masked, in the answer and the audit trail', async () => {
    const answer = await run('leak_error');
    expect(answer.body).toMatchObject({
      status: 'FAILED',
      error: { code: 'STEP_FUNCTION_FAILED', step: 'charge' },
    });
    const message = (answer.body.error as { message: string }).message;
    expect(message).toContain('****-****-****-0004');
    expect(message).toContain('************0004');
    const read = await call(`/local/v1/workflows/${answer.body.id as string}`);
    expect(read.body).toMatchObject({ status: 'FAILED', error: { code: 'STEP_FUNCTION_FAILED' } });
  });

  it('keeps log lines and their data masked, and the workflow completes', async () => {
    expect((await run('leak_log')).body).toMatchObject({ status: 'COMPLETED' });
  });

  it('fails the task of an ASYNC step that returns a card number, and the step', async () => {
    const started = await run('leak_task');
    const id = started.body.id as string;
    const ended = await waitFor(async () => {
      const read = await call(`/local/v1/workflows/${id}`);
      return read.body.status === 'FAILED' || read.body.status === 'COMPLETED'
        ? read.body
        : undefined;
    });
    // the task fails with the code (its result is never stored), and with it the step
    expect(ended).toMatchObject({
      status: 'FAILED',
      error: { code: 'STEP_FUNCTION_FAILED', step: 'score' },
    });
    expect((ended.error as { message: string }).message).toContain('CARD_DATA_IN_STATE');
  });

  it('refuses an idempotency key that is a card number', async () => {
    const answer = await run('leak_log', { idempotency_key: CARDS.key.pan });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ code: 'CARD_DATA_IN_CLEAR' });
  });

  it('recorded what happened, masked', () => {
    const db = new Database(dbPath, { readonly: true });
    try {
      const audit = db.prepare(`SELECT event_type, event_data FROM workflow_audit_log`).all() as {
        event_type: string;
        event_data: string;
      }[];
      const failures = audit.filter((row) => row.event_type === 'STEP_FAILED');
      expect(failures.map((row) => row.event_data).join('\n')).toContain('****-****-****-0004');
      expect(audit.some((row) => row.event_data.includes('CARD_DATA_IN_STATE'))).toBe(true);
      const logs = db.prepare(`SELECT message, data FROM workflow_execution_logs`).all() as {
        message: string;
        data: string;
      }[];
      expect(logs.map((row) => row.message)).toEqual(
        expect.arrayContaining(['card read **** ****** *0005', 'track data ***********0005']),
      );
      expect(logs.map((row) => row.data).join('\n')).toContain('****-****-****-1117');
      const tasks = db.prepare(`SELECT status, result, error FROM tasks`).all() as Json[];
      expect(tasks).toEqual([
        expect.objectContaining({
          status: 'FAILED',
          result: null,
          error: expect.stringMatching(/^CARD_DATA_IN_STATE: /) as unknown,
        }),
      ]);
    } finally {
      db.close();
    }
  });

  it('holds no card number in its database, WAL or shared-memory file, byte by byte', () => {
    const files = [dbPath, `${dbPath}-wal`, `${dbPath}-shm`];
    for (const file of files) expect(existsSync(file)).toBe(true);
    expect(statSync(`${dbPath}-wal`).size).toBeGreaterThan(0);
    for (const file of files)
      expect({ file, cards: cardsIn(readFileSync(file)) }).toEqual({ file, cards: [] });
  });

  it('logs and answers no card number', () => {
    expect(logged.length).toBeGreaterThan(0);
    const log = Buffer.from(logged.map((entry) => JSON.stringify(entry)).join('\n'));
    expect(cardsIn(log)).toEqual([]);
    expect(answers.length).toBeGreaterThanOrEqual(6);
    expect(cardsIn(Buffer.from(answers.join('\n')))).toEqual([]);
  });

  it('keeps its files owner-only: database, WAL, shared memory, card key, local token', () => {
    for (const file of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`, cardKeyFile, tokenFile])
      expect({ file, mode: statSync(file).mode & 0o777 }).toEqual({ file, mode: 0o600 });
    expect(statSync(dirname(dbPath)).mode & 0o777).toBe(0o700);
  });

  it('holds no card number in its database once stopped (the WAL checkpointed into it)', async () => {
    await api.close();
    await agent.stop();
    expect(cardsIn(readFileSync(dbPath))).toEqual([]);
    for (const file of [`${dbPath}-wal`, `${dbPath}-shm`])
      if (existsSync(file)) expect(cardsIn(readFileSync(file))).toEqual([]);
  });
});
