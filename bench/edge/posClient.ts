/**
 * The POS of the edge benchmark, in a process of its own as on a terminal: it posts payments
 * to the agent's local API over loopback HTTP (node:http, keep-alive) and reports what it
 * measured. Keeping the client out of the agent's process keeps its CPU and garbage out of
 * the latencies being measured, as they would be on a real terminal.
 *
 * Calls: `latencies {url, token, from, count}` — payments one at a time, each one's round trip
 * in ms; `throughput {url, token, from, count, concurrency}` — `concurrency` POS clients at
 * once, the elapsed ms.
 */
import { keepAlive, send } from '../gateway/http.js';
import { serveParent, type Call } from '../gateway/child.js';

const agent = keepAlive(64);

/** Pay `amount` minor units with card number `i`'s token; throws unless approved. */
async function pay(url: string, token: string, i: number): Promise<void> {
  const answer = await send(agent, url, '/local/v1/workflows', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      workflow_type: 'pos_payment',
      data: {
        amount_minor: 1 + (i % 5000),
        currency: 'EUR',
        card: { token: `tok_${i}`, last4: '4242' },
      },
    }),
  });
  const body = JSON.parse(answer.body) as {
    status?: string;
    state?: { decision?: { status?: string } };
  };
  if (
    answer.status !== 201 ||
    body.status !== 'COMPLETED' ||
    body.state?.decision?.status !== 'APPROVED'
  )
    throw new Error(`payment ${i}: HTTP ${answer.status} ${answer.body.slice(0, 300)}`);
}

interface Run extends Call {
  url: string;
  token: string;
  from: number;
  count: number;
  concurrency?: number;
}

serveParent(Promise.resolve({}), {
  async latencies(call) {
    const { url, token, from, count } = call as Run;
    const out: number[] = [];
    for (let i = from; i < from + count; i++) {
      const started = performance.now();
      await pay(url, token, i);
      out.push(performance.now() - started);
    }
    return out;
  },
  async throughput(call) {
    const { url, token, from, count, concurrency = 1 } = call as Run;
    let next = from;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < from + count) await pay(url, token, next++);
      }),
    );
    return performance.now() - started;
  },
});
