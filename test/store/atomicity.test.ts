import { atomicityConformance } from './conformance/atomicity.js';
import { twoProcessSqlAdapters } from './adapters.js';

for (const { name, open, skip } of await twoProcessSqlAdapters()) atomicityConformance(name, open, { skip });
