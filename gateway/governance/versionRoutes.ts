/**
 * Command versions (`/api/v1/command-types/{type}/…`): admins register a JSON schema
 * (subset: runtime/jsonSchema) per command type and version, deprecate versions, and everyone
 * may read the versions and the changelog between two of them. A type's history is linear:
 * each new version must be newer than every version before it, and its CREATED changelog
 * entry summarises what changed since the previous one (schemaDiff.ts). Commands are checked
 * against these schemas when they are created (commandVersions.ts).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { checkJsonSchema, COMMAND_TYPES, ConflictError } from '../../runtime/index.js';
import {
  deprecateCommandVersion,
  insertCommandVersion,
  listCommandChangelog,
  listCommandVersions,
  lockCommandType,
} from './store/commandVersions/index.js';
import { auditActor } from '../auditActor.js';
import type { GatewayContext } from '../context.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';
import { defaultRisk } from './commandRisk.js';
import { byVersion, currentVersion } from './commandVersions.js';
import { RULES_CHANGED } from './gateReads.js';
import {
  changelogJson,
  changelogSchema,
  commandVersionJson,
  commandVersionSchema,
} from './present.js';
import { riskLevelField } from './riskLevel.js';
import { describeSchemaChange } from './schemaDiff.js';
import { compareVersions, versionField } from './semver.js';

const READ = ['admin', 'operator', 'viewer'] as const;
const ADMIN = ['admin'] as const;
const tags = ['command versions'];

const typeParams = z.strictObject({ type: z.enum(COMMAND_TYPES) });
const versionParams = z.strictObject({ type: z.enum(COMMAND_TYPES), version: versionField });
const registerBody = z.strictObject({
  version: versionField,
  /** JSON Schema of the payload (the supported subset; see the README). */
  payload_schema: z.union([z.boolean(), z.record(z.string(), z.unknown())]),
  description: z.string().max(2000).optional(),
  risk_level: riskLevelField.optional(),
  /** Free-text notes for the changelog entry. */
  notes: z.string().max(2000).optional(),
});
const deprecateBody = z.strictObject({
  replaced_by: versionField.optional(),
  reason: z.string().max(2000).optional(),
});
const changelogQuery = z.strictObject({
  from: versionField.optional(),
  to: versionField.optional(),
});
const typeSummary = z.object({
  command_type: z.string(),
  current_version: z.string().nullable(),
  versions: z.number().int(),
  default_risk_level: z.string(),
});

const versionNotFound = (type: string, version: string) =>
  new Problem(404, 'COMMAND_VERSION_NOT_FOUND', `${type} has no version ${version}`);

/** Register the command version routes on `ctx`. */
export function registerCommandVersionRoutes(ctx: GatewayContext): void {
  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-types',
      summary: 'command types with their current version',
      tags,
      access: { roles: READ },
      response: z.object({ command_types: z.array(typeSummary) }),
    },
    async () => {
      const all = await listCommandVersions(ctx.store);
      return {
        command_types: COMMAND_TYPES.map((type) => {
          const versions = all.filter((v) => v.commandType === type);
          return {
            command_type: type,
            current_version: currentVersion(versions)?.version ?? null,
            versions: versions.length,
            default_risk_level: defaultRisk(type),
          };
        }),
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-types/:type/versions',
      summary: 'the versions of a command type, oldest first, and which one is current',
      tags,
      access: { roles: READ },
      params: typeParams,
      response: z.object({
        command_type: z.string(),
        current_version: z.string().nullable(),
        versions: z.array(commandVersionSchema),
      }),
    },
    async ({ params }) => {
      const versions = byVersion(await listCommandVersions(ctx.store, [params.type]));
      return {
        command_type: params.type,
        current_version: currentVersion(versions)?.version ?? null,
        versions: versions.map(commandVersionJson),
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-types/:type/versions/:version',
      summary: 'one version of a command type, with its payload schema',
      tags,
      access: { roles: READ },
      params: versionParams,
      response: commandVersionSchema,
    },
    async ({ params }) => {
      const versions = await listCommandVersions(ctx.store, [params.type]);
      const found = versions.find((v) => v.version === params.version);
      if (!found) throw versionNotFound(params.type, params.version);
      return commandVersionJson(found);
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/command-types/:type/versions',
      summary: 'register a new version of a command type (its payload JSON schema)',
      tags,
      access: { roles: ADMIN },
      params: typeParams,
      body: registerBody,
      response: commandVersionSchema,
      status: 201,
      bodyLimit: 256 * 1024,
    },
    async ({ params, body, principal, request }) => {
      const issues = checkJsonSchema(body.payload_schema, '$.payload_schema');
      if (issues.length > 0)
        throw new Problem(
          422,
          'SCHEMA_INVALID',
          `the payload schema is not supported: ${issues
            .slice(0, 5)
            .map((i) => `${i.path}: ${i.message}`)
            .join('; ')}`,
          { errors: issues },
        );
      const actor = auditActor(principal, request);
      const now = ctx.now();
      try {
        const created = await ctx.changes.transaction(async (tx, changed) => {
          await lockCommandType(tx, params.type);
          await changed(RULES_CHANGED);
          const versions = byVersion(await listCommandVersions(tx, [params.type]));
          const latest = versions.at(-1);
          if (latest && compareVersions(body.version, latest.version) <= 0)
            throw new Problem(
              409,
              latest.version === body.version || versions.some((v) => v.version === body.version)
                ? 'COMMAND_VERSION_EXISTS'
                : 'COMMAND_VERSION_NOT_NEWER',
              `${params.type} ${body.version} is not newer than the latest version ${latest.version}`,
              { latest_version: latest.version },
            );
          return insertCommandVersion(
            tx,
            {
              id: randomUUID(),
              commandType: params.type,
              version: body.version,
              payloadSchema: body.payload_schema,
              description: body.description ?? null,
              riskLevel: body.risk_level ?? null,
              fromVersion: latest?.version ?? null,
              changes: {
                ...describeSchemaChange(latest?.payloadSchema ?? null, body.payload_schema),
                ...(latest && latest.riskLevel !== (body.risk_level ?? null)
                  ? { risk_level: { from: latest.riskLevel, to: body.risk_level ?? null } }
                  : {}),
                ...(body.notes !== undefined ? { notes: body.notes } : {}),
              },
            },
            actor,
            now,
          );
        });
        return commandVersionJson(created);
      } catch (error) {
        if (error instanceof ConflictError)
          throw new Problem(
            409,
            'COMMAND_VERSION_EXISTS',
            `${params.type} ${body.version} already exists`,
          );
        throw error;
      }
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/command-types/:type/versions/:version/deprecate',
      summary: 'deprecate a version: commands may no longer name it (422)',
      tags,
      access: { roles: ADMIN },
      params: versionParams,
      body: deprecateBody,
      response: commandVersionSchema,
      bodyLimit: 16 * 1024,
    },
    async ({ params, body, principal, request }) => {
      const actor = auditActor(principal, request);
      const now = ctx.now();
      const deprecated = await ctx.changes.transaction(async (tx, changed) => {
        await lockCommandType(tx, params.type);
        await changed(RULES_CHANGED);
        const versions = await listCommandVersions(tx, [params.type]);
        const target = versions.find((v) => v.version === params.version);
        if (!target) throw versionNotFound(params.type, params.version);
        if (target.deprecated)
          throw new Problem(
            409,
            'COMMAND_VERSION_ALREADY_DEPRECATED',
            `${params.type} ${params.version} is deprecated already`,
          );
        if (body.replaced_by !== undefined) {
          const replacement = versions.find((v) => v.version === body.replaced_by);
          if (!replacement || replacement.deprecated || replacement.version === target.version)
            throw new Problem(
              422,
              'REPLACEMENT_VERSION_INVALID',
              `replaced_by must name another version of ${params.type} that is not deprecated`,
              { errors: [{ path: '$.replaced_by', message: 'not a usable version' }] },
            );
        }
        return deprecateCommandVersion(
          tx,
          {
            commandType: params.type,
            version: params.version,
            replacedBy: body.replaced_by ?? null,
            reason: body.reason ?? null,
          },
          actor,
          now,
        );
      });
      if (!deprecated) throw versionNotFound(params.type, params.version);
      return commandVersionJson(deprecated);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-types/:type/changelog',
      summary: 'the changelog of a command type; with from/to, the changes after `from` up to `to`',
      tags,
      access: { roles: READ },
      params: typeParams,
      query: changelogQuery,
      response: z.object({
        command_type: z.string(),
        from: z.string().nullable(),
        to: z.string().nullable(),
        breaking: z.boolean(),
        entries: z.array(changelogSchema),
      }),
    },
    async ({ params, query }) => {
      if (
        query.from !== undefined &&
        query.to !== undefined &&
        compareVersions(query.from, query.to) >= 0
      )
        throw new Problem(400, 'VERSION_RANGE_INVALID', '`from` must be older than `to`');
      const entries = (await listCommandChangelog(ctx.store, params.type))
        .filter(
          (e) =>
            (query.from === undefined || compareVersions(e.toVersion, query.from) > 0) &&
            (query.to === undefined || compareVersions(e.toVersion, query.to) <= 0),
        )
        .sort((a, b) => compareVersions(a.toVersion, b.toVersion) || a.id - b.id);
      const breaking = entries.some(
        (e) =>
          e.changeType === 'CREATED' &&
          typeof e.changes === 'object' &&
          e.changes !== null &&
          (e.changes as { breaking?: unknown }).breaking === true,
      );
      return {
        command_type: params.type,
        from: query.from ?? null,
        to: query.to ?? null,
        breaking,
        entries: entries.map(changelogJson),
      };
    },
  );
}
