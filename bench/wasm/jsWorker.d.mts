/** Types of `jsWorker.mjs` (plain JavaScript, so piscina loads it without tsx). */
export declare function score(input: unknown): { fraud_score: number };
export default function run(task: { input: unknown }): { fraud_score: number };
