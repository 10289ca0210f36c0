// The entries of an option's select: the GPU catalog for `gpu`, the option's own choices for the
// others. A value from a shared link that is not among them is kept as an entry of its own, so the
// select shows it and the core, not the form, says what is wrong with it.

import { gib } from '../format';
import type { Gpu, OptionSpec } from '../types';

/** [value, text] of every entry after the first ("default", which means unset). */
export function selectChoices(
  option: OptionSpec,
  gpus: Gpu[],
  current: string | undefined,
): [string, string][] {
  const choices: [string, string][] =
    option.key === 'gpu'
      ? gpus.map((g) => [g.id, `${g.name} (${gib(g.usable_bytes)})`])
      : option.choices.map((c) => [c, c]);
  if (current !== undefined && !choices.some(([value]) => value === current))
    choices.push([current, current]);
  return choices;
}

/** Whether an option is edited with a select rather than a text input or a checkbox. */
export function usesSelect(option: OptionSpec): boolean {
  return option.kind === 'choice' || option.key === 'gpu';
}
