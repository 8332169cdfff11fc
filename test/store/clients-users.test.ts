import { clientsUsersConformance } from './conformance/clients-users.js';
import { sqlAdapters } from './adapters.js';

for (const { name, open, skip } of await sqlAdapters()) clientsUsersConformance(name, open, { skip });
