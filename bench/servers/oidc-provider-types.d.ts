/** node-oidc-provider ships no types; the bench uses a few calls and casts where it does. */
declare module 'oidc-provider' {
  const Provider: new (issuer: string, configuration: Record<string, unknown>) => { callback(): (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void };
  export default Provider;
}
