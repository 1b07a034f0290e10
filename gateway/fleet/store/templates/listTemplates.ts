import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { TEMPLATE_COLUMNS, rowToTemplate, type TemplateRecord } from './template.js';

/** Filters of {@link listTemplates}. */
export interface TemplateFilter {
  /** Every version of this name, newest first; without it, the latest version of each name. */
  name?: string;
  /** Page size (default 100, at most 500). */
  limit?: number;
}

/** Templates by name (see {@link TemplateFilter}). */
export async function listTemplates(
  h: CloudHandle,
  filter: TemplateFilter = {},
): Promise<TemplateRecord[]> {
  const limit = Math.min(Math.max(filter.limit ?? 100, 1), 500);
  try {
    let query = h.cloud
      .selectFrom('command_templates as t')
      .select(TEMPLATE_COLUMNS.map((c) => `t.${c}` as const));
    query =
      filter.name !== undefined
        ? query.where('t.name', '=', filter.name)
        : query.where((eb) =>
            eb(
              't.version',
              '=',
              eb
                .selectFrom('command_templates as l')
                .select(({ fn }) => fn.max('l.version').as('v'))
                .whereRef('l.name', '=', 't.name'),
            ),
          );
    const rows = await query.orderBy('t.name').orderBy('t.version', 'desc').limit(limit).execute();
    return rows.map((row) => rowToTemplate(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list templates');
  }
}
