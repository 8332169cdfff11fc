import { notifyOutboxConformance } from './conformance/notify-outbox.js';
import { twoProcessSqlAdapters } from './adapters.js';

for (const { name, open, skip } of await twoProcessSqlAdapters()) notifyOutboxConformance(name, open, { skip });
