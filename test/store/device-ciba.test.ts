import { backchannelConformance } from './conformance/device-ciba.js';
import { sqlAdapters } from './adapters.js';

for (const { name, open, skip } of await sqlAdapters()) backchannelConformance(name, open, { skip });
