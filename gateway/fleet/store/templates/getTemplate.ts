import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { TEMPLATE_COLUMNS, rowToTemplate, type TemplateRecord } from './template.js';

/** The template version `templateId`, or undefined. */
export async function getTemplate(
  h: CloudHandle,
  templateId: string,
): Promise<TemplateRecord | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('command_templates')
      .select(TEMPLATE_COLUMNS)
      .where('template_id', '=', templateId)
      .executeTakeFirst();
    return row ? rowToTemplate(h.codec, row) : undefined;
  } catch (error) {
    throw translateDriverError(error, `get template ${templateId}`);
  }
}
