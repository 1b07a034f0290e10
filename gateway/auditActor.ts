/** Who made a change, as the audit log records it: operator name and role, or the device. */
import type { FastifyRequest } from 'fastify';
import type { CommandActor } from './commands/store/commands/command.js';
import type { Principal } from './auth/principal.js';

/** The audit actor of `principal` calling through `request`. */
export function auditActor(principal: Principal, request: FastifyRequest): CommandActor {
  return principal.kind === 'user'
    ? {
        actor: principal.name,
        role: principal.role,
        sourceIp: request.ip,
        tokenId: principal.tokenId,
      }
    : { actor: principal.deviceId, role: 'device', sourceIp: request.ip };
}
