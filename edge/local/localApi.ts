/**
 * The local API the POS application calls on the terminal itself (loopback only):
 *
 * | method | path                               | answer                                                      |
 * |--------|------------------------------------|-------------------------------------------------------------|
 * | POST   | /local/v1/workflows                | `{workflow_type, data, idempotency_key?}` → run until no longer ACTIVE: 201 (200 for a repeated key) with the workflow (`id`, `status`, `state`, …) |
 * | GET    | /local/v1/workflows/{id}           | the workflow                                                |
 * | POST   | /local/v1/workflows/{id}/resume    | `{input}` for a WAITING_HUMAN_INPUT workflow → run on       |
 * | GET    | /local/v1/status                   | online, SAF backlog, configuration version, device id, …    |
 *
 * Every request needs `Authorization: Bearer <token>` (localToken.ts). Errors are
 * problem+json with a stable `code`. An offline payment that the store-and-forward limits of
 * the signed configuration do not allow is not started: the answer is **409** with `code`
 * `SAF_AMOUNT_LIMIT`, `SAF_COUNT_LIMIT` or `SAF_AGE_LIMIT` and `decision: "DECLINED"` — a
 * problem, not a workflow, because no workflow ran and none is stored; the POS shows the
 * customer a decline (or asks for another means of payment).
 *
 * A workflow that ends FAILED is still a 200/201 answer: the request was carried out and the
 * workflow's `status` and `error` say how it ended (a step that left a card number in the
 * state fails the workflow with `CARD_DATA_IN_STATE`). Every answer leaves with its card
 * numbers masked (edge/cardData).
 */
import type Fastify from 'fastify';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { workflowJson } from '../../actors/index.js';
import { requireOptional, SaffronError, type WorkflowRecord } from '../../runtime/index.js';
import type { EdgeAgent } from '../agent/createEdgeAgent.js';
import { maskStoredText } from '../cardData/maskCardNumbers.js';
import { bearerMatches } from './localToken.js';
import { frameworkProblem, LocalProblem, problemJson } from './problem.js';

/** What the local API needs. */
export interface LocalApiOptions {
  agent: Pick<EdgeAgent, 'runWorkflow' | 'resumeWorkflow' | 'getWorkflow' | 'status'>;
  /** The bearer token callers must present. */
  token: string;
  /** Largest request body (64 KiB). */
  bodyLimit?: number;
}

/** A local API server. */
export interface LocalApi {
  /** Listen on `host:port` (loopback by default; 0 picks a free port); returns the base URL. */
  listen(port: number, host?: string): Promise<string>;
  /** Stop accepting, let running requests finish; idempotent. */
  close(): Promise<void>;
}

const jsonObject = z.record(z.string(), z.unknown());
const runBody = z.strictObject({
  workflow_type: z.string().min(1).max(200),
  data: jsonObject.default({}),
  idempotency_key: z.string().min(1).max(200).optional(),
});
const resumeBody = z.strictObject({ input: jsonObject.default({}) });
const idParams = z.strictObject({ id: z.uuid() });

/** Status of each agent and engine code a caller can cause. */
const STATUS_OF: Record<string, number> = {
  WORKFLOW_TYPE_UNKNOWN: 404,
  WORKFLOW_NOT_FOUND: 404,
  RESERVED_DATA_KEY: 422,
  CARD_DATA_IN_CLEAR: 422,
  CARD_DATA_IN_STATE: 422,
  INVALID_INPUT: 422,
  IDEMPOTENCY_CONFLICT: 409,
  WORKFLOW_NOT_WAITING: 409,
  WORKFLOW_NOT_ACTIVE: 409,
  WORKFLOW_TERMINAL: 409,
  AGENT_NOT_RUNNING: 503,
};

function parse<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const errors = parsed.error.issues.slice(0, 20).map((issue) => ({
    path: [where, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  throw new LocalProblem(
    where === 'params' ? 404 : 400,
    where === 'params' ? 'WORKFLOW_NOT_FOUND' : 'INVALID_REQUEST',
    errors.map((e) => `${e.path}: ${e.message}`).join('; '),
    where === 'params' ? {} : { errors },
  );
}

const answer = (reply: FastifyReply, status: number, record: WorkflowRecord) =>
  reply.code(status).send(workflowJson(record));

/** Build the local API over `options.agent` (not listening yet). */
export function createLocalApi(options: LocalApiOptions): LocalApi {
  const { agent } = options;
  // an optional dependency (runtime/optionalDependency.ts), loaded when the API is built
  const fastify = requireOptional<typeof Fastify>('fastify', 'the edge local API');
  const app: FastifyInstance = fastify({
    logger: false,
    bodyLimit: options.bodyLimit ?? 64 * 1024,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });

  app.addHook('onRequest', (request, _reply, done) => {
    if (bearerMatches(options.token, request.headers.authorization)) done();
    else
      done(new LocalProblem(401, 'UNAUTHORIZED', 'send Authorization: Bearer <local API token>'));
  });

  // defence in depth: whatever an answer quotes (a workflow's error, an input echoed in a
  // problem), it leaves the terminal with its card numbers masked
  app.addHook('onSend', async (_request, _reply, payload) =>
    typeof payload === 'string' ? maskStoredText(payload) : payload,
  );

  app.setErrorHandler(async (error, _request, reply) => {
    let problem: LocalProblem | undefined;
    if (error instanceof LocalProblem) problem = error;
    else if (error instanceof SaffronError && STATUS_OF[error.code] !== undefined)
      problem = new LocalProblem(STATUS_OF[error.code]!, error.code, error.message);
    else problem = frameworkProblem(error);
    if (!problem) {
      const code = error instanceof SaffronError ? error.code : 'INTERNAL';
      problem = new LocalProblem(500, code, 'the agent could not complete the request');
    }
    if (problem.status === 401) void reply.header('www-authenticate', 'Bearer');
    return reply.code(problem.status).type('application/problem+json').send(problemJson(problem));
  });
  app.setNotFoundHandler(async (request, reply) =>
    reply
      .code(404)
      .type('application/problem+json')
      .send(
        problemJson(
          new LocalProblem(
            404,
            'NOT_FOUND',
            `no route ${request.method} ${request.url.split('?')[0]}`,
          ),
        ),
      ),
  );

  app.post('/local/v1/workflows', async (request, reply) => {
    const body = parse(runBody, request.body ?? {}, 'body');
    const outcome = await agent.runWorkflow({
      workflowType: body.workflow_type,
      data: body.data,
      ...(body.idempotency_key !== undefined ? { idempotencyKey: body.idempotency_key } : {}),
    });
    if (outcome.kind === 'declined')
      throw new LocalProblem(409, outcome.code, outcome.message, {
        decision: 'DECLINED',
        offline: true,
      });
    return answer(reply, outcome.created ? 201 : 200, outcome.record);
  });

  app.get('/local/v1/workflows/:id', async (request, reply) => {
    const { id } = parse(idParams, request.params, 'params');
    const record = await agent.getWorkflow(id);
    if (!record) throw new LocalProblem(404, 'WORKFLOW_NOT_FOUND', `no workflow ${id}`);
    return answer(reply, 200, record);
  });

  app.post('/local/v1/workflows/:id/resume', async (request, reply) => {
    const { id } = parse(idParams, request.params, 'params');
    const body = parse(resumeBody, request.body ?? {}, 'body');
    const record = await agent.getWorkflow(id);
    if (!record) throw new LocalProblem(404, 'WORKFLOW_NOT_FOUND', `no workflow ${id}`);
    if (record.status !== 'WAITING_HUMAN_INPUT')
      throw new LocalProblem(
        409,
        'WORKFLOW_NOT_WAITING',
        `workflow ${id} is ${record.status}, not WAITING_HUMAN_INPUT`,
      );
    return answer(reply, 200, await agent.resumeWorkflow(id, body.input));
  });

  app.get('/local/v1/status', async () => agent.status());

  let closed: Promise<void> | undefined;
  return {
    async listen(port, host = '127.0.0.1') {
      await app.listen({ port, host });
      const address = app.server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      return `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
    },
    close() {
      closed ??= app.close();
      return closed;
    },
  };
}
