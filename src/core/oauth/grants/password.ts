import { newFamilyId } from '../token-key.js';
import { invalidGrant } from '../../errors.js';
import { required, single } from '../../params.js';
import { resolveScope } from '../../scope.js';
import { mayRefresh, type Grant } from './grant.js';

/**
 * RFC 6749 §4.3. RFC 9700 §2.4 says not to use it, so it is served only to
 * clients registered for it, and shares the login page's brute-force limits.
 */
export const passwordGrant: Grant = {
  grantType: 'password',
  parameters: new Set(['username', 'password', 'scope']),
  async handle({ client, params, address, dpopJkt }, { storage, clock, tokenIssuer, login }) {
    const username = required(params, 'username');
    const password = required(params, 'password');
    const scope = resolveScope(single(params, 'scope'), client.scope);
    // The login form's bounds: a longer value names no account, and would not fit the rate-limit key index.
    if (username.length > 256 || password.length > 1024) throw invalidGrant('invalid resource owner credentials');
    const outcome = await login.attempt(username, password, address);
    if (!outcome.ok) {
      throw invalidGrant(outcome.reason === 'locked' ? 'too many failed attempts; try again later' : 'invalid resource owner credentials');
    }
    // The password alone is not enough for this account (docs/security.md, Second factors); the grant has no second step.
    if (outcome.secondFactor) {
      throw invalidGrant('this account has a second factor; the password grant cannot be used for it: sign in through the authorization endpoint');
    }
    const now = clock.now();
    const familyId = newFamilyId(now);
    return storage.transaction(async (tx) => {
      await tx.tokens.createFamily({ id: familyId, clientId: client.id, userId: outcome.user.id, scope, createdAt: now, revokedAt: null });
      return tokenIssuer.respond(tx, { client, userId: outcome.user.id, scope, familyId, dpopJkt }, mayRefresh(client));
    });
  },
};
