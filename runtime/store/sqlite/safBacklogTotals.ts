/**
 * The store-and-forward backlog in figures — count, sum and sum of absolute `amount_minor`
 * of the PENDING records — kept in `edge_sync_state` as `[count, amount, exposure]` by
 * triggers on `saf_pending_transactions`, in the transaction of every insert, status
 * change and delete. An offline payment checks its limits against these figures before it
 * is approved; summing the records instead read every PENDING record, 2.5 ms per payment
 * with 10,000 queued. The start-up schema pass recomputes the row from the records, in the
 * transaction that (re)creates the triggers, so a database from before them, or one whose
 * row was lost, starts right.
 */

/** `edge_sync_state` key of the totals. */
export const SAF_BACKLOG_TOTALS_KEY = 'saf_backlog_totals';

type Row = 'NEW' | 'OLD';
const pending = (row: Row, value: string) =>
  `CASE WHEN ${row}.status = 'PENDING' THEN ${value} ELSE 0 END`;
const figures = (row: Row) => [
  pending(row, '1'),
  pending(row, `COALESCE(${row}.amount_minor, 0)`),
  pending(row, `ABS(COALESCE(${row}.amount_minor, 0))`),
];

/** The UPDATE of the totals row adding the figures of `plus` and taking away those of `minus`. */
function moveTotals(plus?: Row, minus?: Row): string {
  const add = plus ? figures(plus) : ['0', '0', '0'];
  const take = minus ? figures(minus) : ['0', '0', '0'];
  const parts = add.map((a, i) => `json_extract(value, '$[${i}]') + (${a}) - (${take[i]})`);
  return `UPDATE edge_sync_state SET value = json_array(${parts.join(', ')}) WHERE key = '${SAF_BACKLOG_TOTALS_KEY}';`;
}

/** Statements that recompute the totals and create the triggers, for one transaction. */
export function safBacklogTotalsStatements(now: string): string[] {
  return [
    `INSERT INTO edge_sync_state (key, value, updated_at)
      SELECT '${SAF_BACKLOG_TOTALS_KEY}', json_array(count(*), COALESCE(SUM(amount_minor), 0),
        COALESCE(SUM(ABS(amount_minor)), 0)), '${now}'
      FROM saf_pending_transactions WHERE status = 'PENDING'
      ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    `CREATE TRIGGER IF NOT EXISTS saf_backlog_totals_insert AFTER INSERT ON saf_pending_transactions
      WHEN NEW.status = 'PENDING' BEGIN ${moveTotals('NEW')} END`,
    `CREATE TRIGGER IF NOT EXISTS saf_backlog_totals_update
      AFTER UPDATE OF status, amount_minor ON saf_pending_transactions
      WHEN OLD.status = 'PENDING' OR NEW.status = 'PENDING' BEGIN ${moveTotals('NEW', 'OLD')} END`,
    `CREATE TRIGGER IF NOT EXISTS saf_backlog_totals_delete AFTER DELETE ON saf_pending_transactions
      WHEN OLD.status = 'PENDING' BEGIN ${moveTotals(undefined, 'OLD')} END`,
  ];
}
