// Reading an answer's resolved scenario (the values the core used, defaults filled in), so that
// an unset input can show what "default" meant for this model and layout.

/** The value at a dotted path ("model.moe.top_k"), or undefined where the path ends early. */
export function lookup(root: unknown, path: string): unknown {
  let node = root;
  for (const part of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/** A byte count at `path` as the GiB an option takes (4 decimals), or undefined without one. */
export function gibAt(root: unknown, path: string): number | undefined {
  const bytes = lookup(root, path);
  return typeof bytes === 'number' ? Number((bytes / 1024 ** 3).toFixed(4)) : undefined;
}
