import { databaseKinds } from '../helpers/db.js';
import { migrationsConformance } from './conformance/migrations.js';
import { sharedDatabaseUrl } from './fixtures.js';

for (const { kind, skip } of await databaseKinds()) migrationsConformance(kind, () => sharedDatabaseUrl(kind), { skip });
