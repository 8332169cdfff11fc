import { botStoresConformance } from './conformance/bot.js';
import { sqlAdapters } from './adapters.js';

for (const { name, open, skip } of await sqlAdapters()) {
  botStoresConformance(name, async () => {
    const { stores, close } = await open();
    return { stores: Object.assign(stores.bot, { users: stores.users }), close };
  }, { skip });
}
