/** Quote a string as an SQL literal (both dialects use the standard doubled single quote). */
export function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}
