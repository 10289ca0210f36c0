// Number formatting shared by every view: GiB with two decimals on screen, exact bytes on hover.

export const GIB = 1024 ** 3;

export function gib(bytes: number): string {
  return `${(bytes / GIB).toFixed(2)} GiB`;
}

/** Exact byte count with thousands separators, e.g. "16,060,522,496 bytes". */
export function exactBytes(bytes: number): string {
  return `${groupDigits(bytes)} bytes`;
}

export function groupDigits(n: number): string {
  const sign = n < 0 ? '-' : '';
  const digits = Math.abs(Math.trunc(n)).toString();
  return sign + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Parameter counts as the CLI prints them: 8.03B, 525.34M, 4.10K. */
export function paramCount(n: number): string {
  const units: [number, string][] = [
    [1e12, 'T'],
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'K'],
  ];
  for (const [scale, suffix] of units) if (Math.abs(n) >= scale) return `${(n / scale).toFixed(2)}${suffix}`;
  return String(n);
}

export function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}
