/** How commands print a workflow version next to its type (no imports: `validate` starts fast). */

/** ` v2` for a workflow version `2` or `v2` (never `vv2`); empty without a version. */
export const versionSuffix = (version: string | null | undefined): string =>
  version ? ` v${version.replace(/^v/i, '')}` : '';
