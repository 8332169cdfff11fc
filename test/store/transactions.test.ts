import { transactionsConformance } from './conformance/transactions.js';
import { sqlAdapters } from './adapters.js';

for (const { name, open, skip } of await sqlAdapters()) transactionsConformance(name, open, { skip });
