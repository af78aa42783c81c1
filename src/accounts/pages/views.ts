import { type AuthorizeParams, authorizeQuery } from '../authorize-params';
import { CSRF_FIELD } from '../csrf';
import { PASSWORD_MAX, PASSWORD_MIN } from '../passwords';
import { errorBox, hidden, html, type Html, page } from './html';

/** What every form needs: its CSRF token and the authorize parameters it carries along. */
export interface FormContext {
  csrf: string;
  params: AuthorizeParams;
}

const formFields = (ctx: FormContext, extra: Record<string, string> = {}) =>
  hidden({ [CSRF_FIELD]: ctx.csrf, ...(ctx.params as Record<string, string>), ...extra });

const link = (path: string, params: AuthorizeParams) => {
  const query = authorizeQuery(params);
  return query ? `${path}?${query}` : path;
};

/** A page's way on: to another hosted page, or back to the app (then only to a URI registered for it). */
export interface PageLink {
  href: string;
  label: string;
}

const navLink = (link?: PageLink) => (link ? html`<nav><a href="${link.href}">${link.label}</a></nav>` : '');

const described = (error?: string) => (error ? html` aria-describedby="form-error" aria-invalid="true"` : '');

const passwordHint = html`<p class="hint" id="password-hint">${PASSWORD_MIN} to ${PASSWORD_MAX} characters; a passphrase is fine.</p>`;

export const signInPage = (ctx: FormContext & { appName: string; email?: string; error?: string; cancel?: PageLink }) =>
  page(
    `Sign in to ${ctx.appName}`,
    html`${errorBox(ctx.error)}
<form method="post" action="/sign-in">
${formFields(ctx)}<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${ctx.email ?? ''}"${described(ctx.error)}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${described(ctx.error)}>
<button type="submit">Sign in</button>
</form>
<nav><a href="${link('/register', ctx.params)}">Create an account</a><a href="${link('/forgot-password', ctx.params)}">Forgot your password?</a>${
      ctx.cancel ? html`<a href="${ctx.cancel.href}">${ctx.cancel.label}</a>` : ''
    }</nav>`,
  );

export const totpChallengePage = (ctx: FormContext & { appName: string; pending: string; error?: string; cancel?: PageLink }) =>
  page(
    'Enter your authentication code',
    html`${errorBox(ctx.error)}
<form method="post" action="/sign-in/totp">
${formFields(ctx, { pending: ctx.pending })}<label for="code">6-digit code from your authenticator app</label>
<input id="code" name="code" type="text" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required${described(ctx.error)}>
<button type="submit">Verify</button>
</form>
${navLink(ctx.cancel)}`,
  );

export const registerPage = (ctx: FormContext & { appName: string; email?: string; error?: string }) =>
  page(
    `Create your ${ctx.appName} account`,
    html`${errorBox(ctx.error)}
<form method="post" action="/register">
${formFields(ctx)}<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${ctx.email ?? ''}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}" aria-describedby="password-hint">
${passwordHint}<button type="submit">Create account</button>
</form>
<nav><a href="${link('/sign-in', ctx.params)}">Already have an account? Sign in</a></nav>`,
  );

export const forgotPasswordPage = (ctx: FormContext & { appName: string }) =>
  page(
    'Reset your password',
    html`<form method="post" action="/forgot-password">
${formFields(ctx)}<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required>
<button type="submit">Email me a reset link</button>
</form>
<nav><a href="${link('/sign-in', ctx.params)}">Back to sign in</a></nav>`,
  );

export const resetPasswordPage = (ctx: FormContext & { token: string; error?: string }) =>
  page(
    'Choose a new password',
    html`${errorBox(ctx.error)}
<form method="post" action="/reset-password">
${formFields(ctx, { token: ctx.token })}<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}" aria-describedby="password-hint">
${passwordHint}<button type="submit">Set password</button>
</form>`,
  );

/** A GET only shows this: mail scanners follow links, and only the person's own click should verify. */
export const verifyEmailPage = (ctx: FormContext & { token: string }) =>
  page(
    'Confirm your email',
    html`<form method="post" action="/verify-email">
${formFields(ctx, { token: ctx.token })}<button type="submit">Confirm my email address</button>
</form>`,
  );

/** What the two-step verification pages carry: their form context and the way back to the app. */
export type MfaContext = FormContext & { back?: PageLink };

export const totpStartPage = (ctx: MfaContext & { error?: string }) =>
  page(
    'Two-step verification',
    html`${errorBox(ctx.error)}
<p>Protect your account with a code from an authenticator app each time you sign in.</p>
<form method="post" action="/mfa/totp">
${formFields(ctx)}<label for="password">Your password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${described(ctx.error)}>
<button type="submit">Set up an authenticator app</button>
</form>
${navLink(ctx.back)}`,
  );

/**
 * The key is on the page only right after the password was given: after a wrong code the page asks
 * again without it, so that a stolen login session cannot read a pending key with a made-up code.
 */
export const totpConfirmPage = (ctx: MfaContext & { key?: { secret: string; otpauthUri: string }; error?: string }) =>
  page(
    'Add the account to your authenticator app',
    html`${errorBox(ctx.error)}
${
  ctx.key
    ? html`<p>Add this key to your authenticator app (time-based, 6 digits):</p>
<p><code id="totp-secret">${ctx.key.secret}</code></p>
<p class="hint">Or open this link on the device that holds the app: <a href="${ctx.key.otpauthUri}">${ctx.key.otpauthUri}</a></p>`
    : html`<p>Enter the code your authenticator app shows for the key you added. To see a key again, <a href="${link('/mfa/totp', ctx.params)}">start again with your password</a>: that makes a new key.</p>`
}
<form method="post" action="/mfa/totp/confirm">
${formFields(ctx)}<label for="code">The 6-digit code the app shows</label>
<input id="code" name="code" type="text" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required${described(ctx.error)}>
<button type="submit">Turn on two-step verification</button>
</form>
${navLink(ctx.back)}`,
  );

export const totpEnabledPage = (ctx: MfaContext & { note?: string; error?: string }) =>
  page(
    'Two-step verification is on',
    html`${ctx.note ? html`<p role="status">${ctx.note}</p>` : ''}${errorBox(ctx.error)}
<p>Each sign-in asks for a code from your authenticator app.</p>
<form method="post" action="/mfa/totp/remove">
${formFields(ctx)}<label for="code">To turn it off, the 6-digit code the app shows</label>
<input id="code" name="code" type="text" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required${described(ctx.error)}>
<button type="submit">Turn off two-step verification</button>
</form>
${navLink(ctx.back)}`,
  );

/** A page that only says something, with an optional way on. */
export const messagePage = (title: string, text: string, next?: PageLink) => page(title, html`<p role="status">${text}</p>${navLink(next)}`);

export const signInLink = (params: AuthorizeParams) => link('/sign-in', params);

export type { Html };

/**
 * RP-Initiated Logout's question to the user (src/identity/end-session.controller.ts), asked when
 * nothing in the request vouches for it: any site can send a browser to the end-session endpoint.
 */
export const signOutPage = (ctx: { csrf: string; appName: string; email?: string; fields: Record<string, string> }) =>
  page(
    `Sign out of ${ctx.appName}?`,
    html`<p>${ctx.email ? `You are signed in to ${ctx.appName} as ${ctx.email}.` : `You are signed in to ${ctx.appName}.`}</p>
<form method="post" action="/end-session/confirm">
${hidden({ [CSRF_FIELD]: ctx.csrf, ...ctx.fields })}<button type="submit">Sign out</button>
</form>`,
  );
