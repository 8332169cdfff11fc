import { accessDenied, invalidRequest, temporarilyUnavailable } from '../errors.js';

/**
 * A third-party sign-in that cannot go on is a `GatehouseError` with a page
 * title for the person: `description` is shown to them, never a provider's
 * raw reply (that goes in `detail`, for the log).
 */
const title = 'Sign-in failed';

/** The sign-in request itself is wrong or stale (a bad or replayed callback): 400. */
export const badSignIn = (description: string) => invalidRequest(description, { title });

/** The provider could not be reached or answered nonsense: 502, not our fault and not the person's. */
export const providerFailed = (description: string, detail?: string) => temporarilyUnavailable(description, { status: 502, title, detail });

/** The person declined at the provider. */
export const signInCancelled = (description: string) => accessDenied(description, { title: 'Sign-in cancelled' });
