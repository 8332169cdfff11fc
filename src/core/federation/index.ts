import type { LoginGuard } from '../login.js';
import type { OutboundHttp } from '../outbound.js';
import type { Clock } from '../ports.js';
import { FederatedAccounts } from './accounts.js';
import { EndpointResolver } from './discovery.js';
import { IdTokenVerifier } from './id-token.js';
import type { FederationStorage } from './ports.js';
import type { Provider } from './providers.js';
import { ProviderSignIn } from './sign-in.js';

export { ChoiceError, FederatedAccounts, NO_PASSWORD } from './accounts.js';
export type { ExternalProfile } from './claims.js';
export type { ExternalIdentity, FederationStorage } from './ports.js';
export { loadProviders, type Provider } from './providers.js';

/** Third-party login, wired: the configured providers, the sign-in at them, and the local accounts they lead to. */
export class Federation {
  readonly signIn: ProviderSignIn;
  readonly accounts: FederatedAccounts;
  private readonly byId: Map<string, Provider>;

  constructor(readonly providers: readonly Provider[], deps: { storage: FederationStorage; login: LoginGuard; clock: Clock; http: OutboundHttp }) {
    const { http } = deps;
    this.byId = new Map(providers.map((p) => [p.id, p]));
    this.signIn = new ProviderSignIn({
      flows: deps.storage.flows, clock: deps.clock, http,
      endpoints: new EndpointResolver({ http, clock: deps.clock }),
      idTokens: new IdTokenVerifier({ http, clock: deps.clock }),
    });
    this.accounts = new FederatedAccounts(deps);
  }

  provider(id: string): Provider | undefined {
    return this.byId.get(id);
  }
}
