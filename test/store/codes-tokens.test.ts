import { codesTokensConformance } from './conformance/codes-tokens.js';
import { sqlAdapters } from './adapters.js';

for (const { name, open, skip } of await sqlAdapters()) codesTokensConformance(name, open, { skip });
