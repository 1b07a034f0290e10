// The JavaScript baseline of `bench wasm`: the guest's scoring logic as a plain function,
// run by a piscina pool configured like the WASM runner's (same thread count). It receives
// the input object (as the runner's thread receives the input), scores the JSON text the
// guest would read on stdin, and returns the object the guest would print.
export function score(input) {
  const text = JSON.stringify(input);
  let sum = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) sum += c - 48;
  }
  return { fraud_score: sum % 101 };
}

export default function run(task) {
  return score(task.input);
}
