/**
 * `POST /api/v1/users`: an admin creates an operator API token through the running control
 * plane. With embedded PGlite the server is the only process that may open the database,
 * so this is how operators are added while it runs (`saffron users create` needs the
 * directory to itself). `DELETE /api/v1/users/{token_id}` revokes one: every gateway drops
 * it from memory at the commit (auth/tokenCache.ts), as `saffron users revoke` does.
 */
import { z } from 'zod';
import { USER_ROLES } from '../auth/principal.js';
import { TOKENS_CHANGED } from '../auth/tokenCache.js';
import { createApiToken, revokeApiToken } from '../auth/tokens.js';
import { columnString } from '../columnFields.js';
import type { GatewayContext } from '../context.js';
import { Problem } from '../problem.js';
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
  route(
    ctx,
    {
      method: 'DELETE',
      url: '/api/v1/users/:token_id',
      status: 204,
      summary:
        'revoke an operator API token (admin): refused by every gateway from the commit, within the notification delay',
      tags: ['users'],
      access: { roles: ['admin'] },
      params: z.strictObject({ token_id: z.uuid() }),
    },
    async ({ params, principal, request }) => {
      const revoked = await ctx.changes.transaction(async (tx, changed) => {
        const done = await revokeApiToken(tx, params.token_id, ctx.now());
        if (done) await changed(TOKENS_CHANGED);
        return done;
      });
      if (!revoked)
        throw new Problem(404, 'TOKEN_NOT_FOUND', `no unrevoked API token ${params.token_id}`);
      request.log.info(
        {
          token_id: params.token_id,
          by: principal.kind === 'user' ? principal.tokenId : undefined,
        },
        'API token revoked',
      );
      return undefined;
    },
  );
}
