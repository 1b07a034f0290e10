// Entry of the `threads` provider's workers when Saffron runs from its TypeScript sources
// (vitest, tsx). tsx's loader hooks are registered on the thread that starts tsx, not on
// piscina's worker threads, so a thread could not import `threadsWorker.ts` by itself. This
// file is plain JavaScript: it loads the worker through tsx's `tsImport`, which transpiles it
// and its relative imports. The compiled build (dist/) never uses it: `threadsExecutor.js`
// finds `threadsWorker.js` next to itself and points piscina straight at it.
import { tsImport } from 'tsx/esm/api';

const worker = await tsImport('./threadsWorker.ts', import.meta.url);

export default worker.default;
