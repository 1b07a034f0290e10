/**
 * `POST /api/v1/users`: an admin creates an operator API token through the running control
 * plane. With embedded PGlite the server is the only process that may open the database,
 * so this is how operators are added while it runs (`saffron users create` needs the
 * directory to itself).
 */
import { z } from 'zod';
import { USER_ROLES } from '../auth/principal.js';
import { createApiToken } from '../auth/tokens.js';
import { columnString } from '../columnFields.js';
import type { GatewayContext } from '../context.js';
import { route } from '../route.js';

/** Register the user (API token) route. */
export function registerUserRoutes(ctx: GatewayContext): void {
  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/users',
      summary: 'create an operator API token (admin; the token is shown once)',
      tags: ['users'],
      access: { roles: ['admin'] },
      body: z.strictObject({
        name: columnString('api_tokens', 'name'),
        role: z.enum(USER_ROLES),
      }),
      response: z.object({
        token: z.string(),
        token_id: z.string(),
        name: z.string(),
        role: z.enum(USER_ROLES),
      }),
      status: 201,
      responseHeaders: {
        'Cache-Control': { description: 'no-store: the token is shown once', required: true },
      },
    },
    async ({ body, reply }) => {
      const created = await createApiToken(ctx.store, { name: body.name, role: body.role });
      reply.header('cache-control', 'no-store');
      return {
        token: created.token,
        token_id: created.tokenId,
        name: created.name,
        role: created.role,
      };
    },
  );
}
