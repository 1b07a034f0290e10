import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../../../../runtime/index.js';

/** Where-clause: the row is the newest version of its policy name. */
export const isLatestVersion = (eb: ExpressionBuilder<Database, 'policies'>) =>
  eb(
    'policies.version',
    '=',
    eb
      .selectFrom('policies as newer')
      .select((e) => e.fn.max('newer.version').as('version'))
      .whereRef('newer.name', '=', 'policies.name'),
  );
