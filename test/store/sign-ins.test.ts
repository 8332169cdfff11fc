import { signInsConformance } from './conformance/sign-ins.js';
import { sqlAdapters } from './adapters.js';

for (const { name, open, skip } of await sqlAdapters()) signInsConformance(name, open, { skip });
