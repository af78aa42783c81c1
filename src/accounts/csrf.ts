import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * CSRF protection for the hosted forms: a signed double-submit cookie. The browser holds a random
 * value in an HttpOnly, SameSite=Lax cookie; each form carries HMAC(key, value) as `csrf_token`.
 * Another site can neither read the cookie nor, without the server's key, compute the field for
 * a cookie it managed to plant (a sibling subdomain can set cookies), so a cross-site post fails.
 * Nothing is stored server-side, which is what a form shown before any sign-in needs.
 */
export const CSRF_FIELD = 'csrf_token';

const cookieName = (secure: boolean) => (secure ? '__Host-wfe_csrf' : 'wfe_csrf');

export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export class Csrf {
  constructor(
    private readonly key: Buffer,
    private readonly secure: boolean,
  ) {}

  private sign(value: string): string {
    return createHmac('sha256', this.key).update(value).digest('base64url');
  }

  /** The form's token for this browser, and the Set-Cookie to send when it has no cookie yet. */
  issue(cookieHeader: string | undefined): { token: string; setCookie?: string } {
    const existing = readCookie(cookieHeader, cookieName(this.secure));
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return { token: this.sign(existing) };
    const value = randomBytes(32).toString('base64url');
    const attributes = ['Path=/', 'HttpOnly', 'SameSite=Lax', ...(this.secure ? ['Secure'] : [])];
    return { token: this.sign(value), setCookie: [`${cookieName(this.secure)}=${value}`, ...attributes].join('; ') };
  }

  verify(cookieHeader: string | undefined, field: unknown): boolean {
    const value = readCookie(cookieHeader, cookieName(this.secure));
    if (!value || typeof field !== 'string') return false;
    const expected = Buffer.from(this.sign(value));
    const given = Buffer.from(field);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
