import { accessConformance } from './conformance/access.js';
import { sqlAdapters } from './adapters.js';

for (const { name, open, skip } of await sqlAdapters()) accessConformance(name, open, { skip });
