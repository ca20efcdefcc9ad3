// A bound on JSON nesting. 8 KiB of header or 64 KiB of body hold thousands of brackets, enough to
// overflow the stack of any recursive walk later on (JSON.stringify, a schema, a canonicaliser);
// no legitimate payment, request or metadata comes near the bound.
export const MAX_JSON_DEPTH = 64;

/** The nesting depth of a parsed JSON value (a scalar is 0), counted without recursion; stops past `limit`. */
export function jsonDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth + 1 > deepest) deepest = depth + 1;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node))
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return deepest;
}
