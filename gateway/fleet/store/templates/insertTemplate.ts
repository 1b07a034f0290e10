import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import {
  TEMPLATE_COLUMNS,
  rowToTemplate,
  type TemplateRecord,
  type TemplateRow,
} from './template.js';

/** A template version to save. */
export interface NewTemplate {
  templateId: string;
  name: string;
  description: string | null;
  commands: unknown;
  variables: unknown;
}

/**
 * Save `template` as the next version of its name (1 for a new name) with a
 * TEMPLATE_CREATED audit row. Two saves of one name racing for the same version: the
 * loser's unique violation becomes a ConflictError. Call inside a transaction.
 */
export async function insertTemplate(
  h: CloudHandle,
  template: NewTemplate,
  actor: CommandActor,
  now: Date,
): Promise<TemplateRecord> {
  try {
    const at = h.codec.time(now);
    const result = await sql<TemplateRow>`
      INSERT INTO command_templates (template_id, name, version, description, commands,
        variables, created_by, created_at, updated_at)
      SELECT ${template.templateId}::uuid, ${template.name}, COALESCE(MAX(version), 0) + 1,
        ${template.description}, ${h.codec.json(template.commands)}::jsonb,
        ${h.codec.json(template.variables)}::jsonb, ${actor.actor}, ${at}::timestamptz,
        ${at}::timestamptz
      FROM command_templates WHERE name = ${template.name}
      RETURNING ${sql.join(TEMPLATE_COLUMNS.map((c) => sql.ref(c)))}`.execute(h.db);
    const record = rowToTemplate(h.codec, result.rows[0]!);
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: 'TEMPLATE_CREATED',
          details: {
            template_id: record.templateId,
            name: record.name,
            version: record.version,
          },
        },
      ],
      now,
    );
    return record;
  } catch (error) {
    throw translateDriverError(error, `save template ${template.name}`);
  }
}
