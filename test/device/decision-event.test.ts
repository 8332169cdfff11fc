// A person's decision on a device or CIBA request and its event commit together (issue 24, finding 2:
// "the decision and its event commit together"). With the outbox's events table made unwritable (renamed
// inside the test's own database), deciding fails and the request stays pending, so it can still be
// decided once the table is back; the normal path records both. Through the real SQL store and the
// services a running server uses (the consent page and the chat buttons call these), on SQLite and PostgreSQL.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { sha256 } from '../../src/core/crypto.js';
import type { Client } from '../../src/core/model.js';
import type { BackchannelRequest } from '../../src/core/oauth/device-ports.js';
import { DEVICE_GRANT_TYPE } from '../../src/core/oauth/device.js';
import type { SqlStorage } from '../../src/store/index.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

for (const { kind, skip } of await databaseKinds()) {
  describe(`a device or CIBA decision and its event commit together (${kind})`, { skip, timeout: 60_000 }, () => {
    let server: TestServer;
    let store: SqlStorage;
    let client: Client;
    let person: { id: string };

    before(async () => {
      server = await startServer({ db: kind });
      store = server.gh.storage as unknown as SqlStorage;
      const { id } = await server.createClient({ name: 'Living-room TV', redirectUris: [], grantTypes: [DEVICE_GRANT_TYPE, 'urn:openid:params:grant-type:ciba'] });
      client = (await server.gh.storage.clients.get(id))!;
      person = await server.createUser('dana');
    });
    after(() => server?.close());

    /** The outbox's events table, away and back: any event append fails meanwhile. */
    const eventsAway = () => sql`alter table notify_events rename to notify_events_away`.execute(store.database.db);
    const eventsBack = () => sql`alter table notify_events_away rename to notify_events`.execute(store.database.db);
    const statusOf = async (id: string) => (await store.currentOAuth.backchannel.get(id))?.status;
    const eventsOf = async (type: string) => (await server.gh.storage.events.list({ type, limit: 100 })).filter((e) => e.userId === person.id);

    /** A device request whose code the person entered (so it is theirs to decide). */
    async function deviceRequest(): Promise<string> {
      const { user_code: userCode } = await server.gh.device.authorize(client, { scope: 'user' });
      const entered = await server.gh.device.enter(userCode, person.id, '203.0.113.7');
      assert.ok('request' in entered, JSON.stringify(entered));
      return entered.request.id;
    }

    /** A CIBA request waiting for the person, as /oauth/bc-authorize stores it. */
    async function cibaRequest(): Promise<string> {
      const now = Date.now();
      const r: BackchannelRequest = {
        id: randomUUID(), kind: 'ciba', secretHash: sha256(randomUUID()), userCodeHash: null, clientId: client.id, scope: ['user'], userId: person.id,
        status: 'pending', decidedAt: null, bindingMessage: 'W4SCT', notificationToken: null, intervalSeconds: 5, lastPollAt: null,
        createdAt: now, expiresAt: now + 300_000, consumedAt: null,
      };
      assert.equal(await store.currentOAuth.backchannel.create(r), true);
      return r.id;
    }

    it('device: an event that cannot be written leaves the request undecided; then both are recorded', async () => {
      const id = await deviceRequest();
      await eventsAway();
      try {
        await assert.rejects(server.gh.device.decide(id, person.id, true));
        assert.equal(await statusOf(id), 'pending', 'no decision without its event');
      } finally {
        await eventsBack();
      }
      assert.deepEqual(await eventsOf('device.approved'), []);
      assert.equal(await server.gh.device.decide(id, person.id, true), true, 'still open: decided once the outbox is back');
      assert.equal(await statusOf(id), 'approved');
      const [event, ...more] = await eventsOf('device.approved');
      assert.equal(more.length, 0);
      assert.deepEqual(event!.data, { user_id: person.id, client_id: client.id, client_name: 'Living-room TV', scope: ['user'] });
      // One decision: a second press changes nothing and records nothing.
      assert.equal(await server.gh.device.decide(id, person.id, false), false);
      assert.deepEqual(await eventsOf('device.denied'), []);
    });

    it('CIBA: an event that cannot be written leaves the request undecided; then both are recorded', async () => {
      const id = await cibaRequest();
      await eventsAway();
      try {
        await assert.rejects(server.gh.ciba.decide(id, person.id, false));
        assert.equal(await statusOf(id), 'pending', 'no decision without its event');
      } finally {
        await eventsBack();
      }
      assert.deepEqual(await eventsOf('ciba.denied'), []);
      assert.equal(await server.gh.ciba.decide(id, person.id, false), true);
      assert.equal(await statusOf(id), 'denied');
      const denied = await eventsOf('ciba.denied');
      assert.equal(denied.length, 1);
      assert.equal((denied[0]!.data as { binding_message: string }).binding_message, 'W4SCT');

      const approved = await cibaRequest();
      assert.equal(await server.gh.ciba.decide(approved, person.id, true), true);
      assert.equal(await statusOf(approved), 'approved');
      assert.equal((await eventsOf('ciba.approved')).length, 1);
      assert.equal(await server.gh.ciba.decide(approved, person.id, true), false, 'decided once');
      assert.equal((await eventsOf('ciba.approved')).length, 1);
    });
  });
}
