import { serveProcess, type Node } from '../helpers/processes.js';
import { ADMIN_TOKEN } from './support.js';

export type { Node };

/** `gatehouse serve` with `roles` on `databaseUrl`, the admin API on and private webhook URLs allowed. */
export function serve(databaseUrl: string, roles: string, env: Record<string, string> = {}): Promise<Node> {
  return serveProcess({ GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_ROLES: roles, GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN, GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true', ...env });
}
