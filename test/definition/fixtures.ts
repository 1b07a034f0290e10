/** Paths of the definition fixtures shared by the definition tests. */
import { fileURLToPath } from 'node:url';

/** Folder of the YAML fixtures; also the steps root of their function paths. */
export const FIXTURES = fileURLToPath(new URL('../fixtures/definitions/', import.meta.url));

/** Absolute path of a fixture file. */
export function fixture(name: string): string {
  return `${FIXTURES}${name}`;
}
