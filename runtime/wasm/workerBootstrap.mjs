// Entry of the WASM workers when Saffron runs from its TypeScript sources (vitest, tsx), as
// `threadsWorkerBootstrap.mjs` is for step functions: tsx's loader hooks live on the thread
// that registered them, so this plain-JavaScript file loads `worker.ts` through `tsImport`.
// The compiled build (dist/) never uses it: `runner.js` finds `worker.js` beside itself.
import { tsImport } from 'tsx/esm/api';

const worker = await tsImport('./worker.ts', import.meta.url);

export default worker.default;
