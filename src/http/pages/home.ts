import { html, layout } from './html.js';

/**
 * The pages a person finds without being sent by an application: the home
 * page (`/` on the auth port), which says what Gatehouse is, and the "no page
 * here" answer of every port, which leads home instead of back to an
 * application that never sent them.
 */

export interface HomeView {
  username?: string | undefined;
  csrf?: string | undefined;
  /** An administrator sees the way to the admin console. */
  admin?: boolean;
  /** The chat page ({bot_api_url}), where sign-ins and alerts are approved. */
  chatUrl?: string | undefined;
}

const ABOUT = 'Gatehouse signs you in to this organisation’s apps, asks before an app gets anything from your account, and lets you approve sign-ins and act on security alerts with one tap in a chat.';

export function homePage(v: HomeView): string {
  if (!v.username) {
    return layout('Gatehouse', html`<h1>Gatehouse</h1>
<p class="lede">${ABOUT}</p>
<p><a class="button primary" href="/login">Sign in</a></p>
<p class="muted links">Administrators manage people, apps and keys in the <a href="/admin">admin console</a> after signing in.</p>`);
  }
  return layout('Gatehouse', html`<h1>Gatehouse</h1>
<p class="lede">Signed in as <strong>${v.username}</strong>. ${ABOUT}</p>
<nav class="home-links" aria-label="Where to go">
  ${v.admin ? html`<a class="button primary" href="/admin">Admin console</a>` : ''}
  <a class="button${v.admin ? '' : ' primary'}" href="/account">Your account</a>
  <a class="button" href="/account/security">Security and second factors</a>
  ${v.chatUrl ? html`<a class="button" href="${v.chatUrl}">Chat page</a>` : ''}
</nav>
<form method="post" action="/logout"><input type="hidden" name="csrf_token" value="${v.csrf}"><button type="submit">Sign out</button></form>`);
}

/** 404 for a browser: what happened and the way home (`home`: this port's `/` or the auth port's). */
export function notFoundPage(opts: { home: string; homeLabel?: string; extra?: { href: string; label: string } } = { home: '/' }): string {
  return layout('Page not found', html`<div class="error-mark" aria-hidden="true">?</div>
<h1>Page not found</h1>
<p class="lede">There is no page at this address. It may have been mistyped, or the page has moved.</p>
<p><a class="button primary" href="${opts.home}">${opts.homeLabel ?? 'Go to the Gatehouse home page'}</a></p>
${opts.extra ? html`<p><a class="button" href="${opts.extra.href}">${opts.extra.label}</a></p>` : ''}`);
}
