// Every view of the app, in the order of the navigation.

import { fitView } from './fit';
import { inferenceView } from './inference';
import { planView } from './plan';
import { quickView } from './quick';
import { rooflineView } from './roofline';
import { trainingView } from './training';
import type { View } from './view';

export const VIEWS: View[] = [
  trainingView,
  inferenceView,
  planView,
  fitView,
  rooflineView,
  quickView,
];
