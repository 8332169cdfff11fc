import { registrationConformance } from './conformance/registration.js';
import { sqlAdapters } from './adapters.js';

for (const { name, open, skip } of await sqlAdapters()) registrationConformance(name, open, { skip });
