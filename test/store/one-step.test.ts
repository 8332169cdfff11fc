import { oneStepConformance } from './conformance/one-step.js';
import { sqlAdapters } from './adapters.js';

for (const { name, open, skip } of await sqlAdapters()) oneStepConformance(name, open, { skip });
