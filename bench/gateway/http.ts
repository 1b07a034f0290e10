/**
 * A lean HTTP/1.1 client for load: node:http over a keep-alive agent. `fetch` costs the
 * client several times more CPU per request, and on a two-core machine the client's CPU is
 * taken from the server being measured.
 */
import { Agent, request as httpRequest } from 'node:http';

/** An answer. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A keep-alive agent with at most `sockets` connections. */
export const keepAlive = (sockets: number): Agent =>
  new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });

/** One request to `base` + `path`. */
export function send(
  agent: Agent,
  base: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path,
        method: init.method ?? 'GET',
        headers: {
          ...init.headers,
          ...(init.body !== undefined ? { 'content-length': Buffer.byteLength(init.body) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}
