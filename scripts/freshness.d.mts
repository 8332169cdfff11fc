// Types of scripts/freshness.mjs, for the TypeScript that imports it (test/cli/compiled-start.test.ts).
export declare const ROOT: string;
export declare const APP: string;
export declare const BUILT: string;
export declare function builtEntry(): string;
export declare function distIsFresh(): boolean;
