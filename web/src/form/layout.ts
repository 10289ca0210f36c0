// How a view names, groups and orders the inputs of its scenario form, and the sections and
// sub-headings that follow from it. Pure, so that Vitest can check the order a form shows.

import type { OptionSpec } from '../types';
import { IMPORT_KEYS } from './config_io';

/** How a view names, groups and orders its inputs. */
export interface FormLayout {
  /** Accessible name of the form, e.g. "Training scenario". */
  ariaLabel: string;
  /** Order of the sections; groups not listed follow in the order the options give. */
  groupOrder: string[];
  /** The section an option is shown in (by default the API's group). */
  groupOf: (option: OptionSpec) => string;
  groupTitle: (group: string) => string;
  labelFor: (key: string) => string;
  /** Sections whose fields are split under sub-headings: group -> key -> sub-heading, in order. */
  subgroups: Record<string, Subgroups>;
  /** Sections that start folded: rarely changed, and long on a phone. */
  folded: Set<string>;
  /** The value the core used for an option, read from the answer's resolved scenario. */
  resolved: (resolved: unknown, key: string) => unknown;
}

/** A section's sub-headings: key -> sub-heading, and the order of the sub-headings. */
export interface Subgroups {
  of: Record<string, string>;
  order: string[];
}

/** The sub-heading of fields no sub-heading claims; always last. */
export const OTHER_SUBGROUP = 'Other';

/** Scenario keys the model source sets; they never appear as option fields. */
export const MODEL_KEYS = new Set(['model', 'model_config']);

/**
 * The form's sections in order, each with its options in the order the API lists them. The
 * model section is always there: it holds the model source even when no option falls in it.
 */
export function sectionsOf(options: OptionSpec[], layout: FormLayout): [string, OptionSpec[]][] {
  const byGroup = new Map<string, OptionSpec[]>();
  for (const option of options) {
    // The model source holds the model; the paste box, a pasted config.
    if (MODEL_KEYS.has(option.key) || IMPORT_KEYS.has(option.key)) continue;
    const group = layout.groupOf(option);
    if (!byGroup.has(group)) byGroup.set(group, []);
    byGroup.get(group)!.push(option);
  }
  if (!byGroup.has('model')) byGroup.set('model', []);
  const groups = [
    ...layout.groupOrder.filter((g) => byGroup.has(g)),
    ...[...byGroup.keys()].filter((g) => !layout.groupOrder.includes(g)),
  ];
  return groups.map((group) => [group, byGroup.get(group)!]);
}

/** A section's options under its sub-headings, in their order; empty sub-headings left out. */
export function subgroupsOf(options: OptionSpec[], subgroups: Subgroups): [string, OptionSpec[]][] {
  const titles = [...subgroups.order, OTHER_SUBGROUP];
  return titles
    .map((title): [string, OptionSpec[]] => [
      title,
      options.filter((o) => (subgroups.of[o.key] ?? OTHER_SUBGROUP) === title),
    ])
    .filter(([, members]) => members.length > 0);
}
