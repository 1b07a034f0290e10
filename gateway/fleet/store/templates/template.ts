/**
 * The command template record as operations return it: a named command set with typed
 * variables. Templates are immutable; saving under an existing name adds the next version,
 * so a schedule or an audit row that names a template id always means the same commands.
 * The shapes of `commands` and `variables` are owned by the gateway (gateway/fleet). Cloud
 * tier only.
 */
import type { Codec } from '../../../../runtime/index.js';

/** The columns a template read returns. */
export const TEMPLATE_COLUMNS = [
  'template_id',
  'name',
  'version',
  'description',
  'commands',
  'variables',
  'created_by',
  'created_at',
  'updated_at',
] as const;

/** A command template version. */
export interface TemplateRecord {
  templateId: string;
  name: string;
  version: number;
  description: string | null;
  commands: unknown;
  variables: unknown;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A template row as selected with {@link TEMPLATE_COLUMNS}. */
export interface TemplateRow {
  template_id: string;
  name: string;
  version: number | string;
  description: string | null;
  commands: unknown;
  variables: unknown;
  created_by: string | null;
  created_at: unknown;
  updated_at: unknown;
}

/** Decode a template row. */
export function rowToTemplate(codec: Codec, row: TemplateRow): TemplateRecord {
  return {
    templateId: row.template_id,
    name: row.name,
    version: codec.parseInt(row.version),
    description: row.description,
    commands: codec.parseJson(row.commands),
    variables: codec.parseJson(row.variables) ?? {},
    createdBy: row.created_by,
    createdAt: codec.parseTime(row.created_at),
    updatedAt: codec.parseTime(row.updated_at),
  };
}
