// Number formatting shared by every view: GiB with two decimals on screen, exact bytes on hover.

export const GIB = 1024 ** 3;

export function gib(bytes: number): string {
  return `${gibFixed(bytes, 2)} GiB`;
}

/**
 * bytes / 2^30 with `decimals` places, rounded half to even on the exact value, as the CLI's fmt
 * prints it (toFixed rounds ties up: 1/32 GiB would read 0.0313 here and 0.0312 in the CLI).
 */
export function gibFixed(bytes: number, decimals: number): string {
  if (!Number.isInteger(bytes)) return (bytes / GIB).toFixed(decimals);
  const negative = bytes < 0;
  const scaled = BigInt(Math.abs(bytes)) * 10n ** BigInt(decimals);
  let units = scaled >> 30n;
  const remainder = scaled - (units << 30n);
  const half = 1n << 29n;
  if (remainder > half || (remainder === half && units % 2n === 1n)) units += 1n;
  const digits = units.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = decimals > 0 ? `.${digits.slice(-decimals)}` : '';
  return `${negative && units !== 0n ? '-' : ''}${whole}${fraction}`;
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
  for (const [scale, suffix] of units)
    if (Math.abs(n) >= scale) return `${(n / scale).toFixed(2)}${suffix}`;
  return String(n);
}

export function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}
