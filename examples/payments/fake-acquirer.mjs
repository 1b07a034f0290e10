// A local stand-in for an acquirer's authorization host, for trying the online path:
//   node examples/payments/fake-acquirer.mjs 9999
// Approves amounts up to 100000 minor units; declines larger ones.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import process from 'node:process';

const port = Number(process.argv[2] ?? 9999);
createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const request = JSON.parse(body || '{}');
    const approved = Number(request.amount_minor) <= 100000;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        approved
          ? { approved, authorization_id: randomUUID() }
          : { approved, reason: 'LIMIT_EXCEEDED' },
      ),
    );
  });
}).listen(port, '127.0.0.1', () =>
  process.stdout.write(`fake acquirer on http://127.0.0.1:${port}\n`),
);
