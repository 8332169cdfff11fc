import { loadConfig } from '../../src/config.js';
import { createClient, createUser, type ClientInput } from '../../src/core/admin.js';
import type { Clock } from '../../src/core/ports.js';
import { startGatehouse, type RunningGatehouse } from '../../src/server.js';
import { dropDatabase, freshDatabaseUrl, type DbKind } from './db.js';

export interface TestServer extends RunningGatehouse {
  url: string;
  databaseUrl: string;
  createUser(username: string, password?: string, email?: string): Promise<{ id: string; username: string; password: string }>;
  createClient(input: Partial<ClientInput>): Promise<{ id: string; secret: string | undefined }>;
}

/** A real Gatehouse on a loopback port with a database of its own. */
export async function startServer(opts: { db?: DbKind; env?: Record<string, string>; clock?: Clock } = {}): Promise<TestServer> {
  const databaseUrl = freshDatabaseUrl(opts.db ?? 'sqlite');
  const config = loadConfig({
    GATEHOUSE_DATABASE_URL: databaseUrl,
    GATEHOUSE_AUTH_PORT: '0',
    GATEHOUSE_API_PORT: '0',
    GATEHOUSE_BOT_PORT: '0',
    GATEHOUSE_LOG_LEVEL: process.env.GATEHOUSE_LOG_LEVEL ?? 'silent',
    ...opts.env,
  });
  const running = await startGatehouse(config, opts.clock ? { clock: opts.clock } : {});
  const { gh } = running;
  return {
    ...running,
    url: running.authUrl,
    databaseUrl,
    async close() {
      await running.close();
      await dropDatabase(databaseUrl);
    },
    async createUser(username, password = 'correct horse battery staple', email = `${username}@example.test`) {
      const u = await createUser(gh.storage, gh.hasher, gh.clock, { username, email, password });
      return { id: u.id, username, password };
    },
    async createClient(input) {
      const { client, secret } = await createClient(gh.storage, gh.clock, { name: 'Test app', redirectUris: ['https://app.example.test/callback'], ...input });
      return { id: client.id, secret };
    },
  };
}
