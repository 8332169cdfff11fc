/**
 * What every conformance suite takes: a factory that opens fresh stores for
 * one adapter (SQLite, PostgreSQL in a schema of its own, Redis under a key
 * prefix of its own) and closes them afterwards. A suite is one exported
 * `xxxConformance(name, factory)` per port, run once per adapter by the
 * test files beside this folder (test/store/*.test.ts).
 */
export interface Opened<S> {
  stores: S;
  close(): Promise<void>;
}

export type StoreFactory<S> = () => Promise<Opened<S>>;

export interface SuiteOptions {
  /** Why the adapter's server is not there (outside CI only; with CI=true a missing server fails). */
  skip?: string | false;
}
