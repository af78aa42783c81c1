import { createHash } from 'node:crypto';

/** Markup built only through `html` tagged templates; every interpolated value is escaped unless already Html. */
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

const render = (value: unknown): string => {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escape(String(value));
};

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  return new Html(strings.reduce((out, s, i) => out + s + (i < values.length ? render(values[i]) : ''), ''));
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d1f24}
main{max-width:26rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002}
h1{font-size:1.4rem;margin-top:0}label{display:block;margin-top:1rem;font-weight:600}
input:not([type=hidden]){box-sizing:border-box;width:100%;padding:.6rem;margin-top:.25rem;font:inherit;border:1px solid #767676;border-radius:4px}
button{margin-top:1.5rem;width:100%;padding:.7rem;font:inherit;font-weight:600;color:#fff;background:#1a56db;border:0;border-radius:4px;cursor:pointer}
input:focus,button:focus{outline:3px solid #f59e0b;outline-offset:1px}
.error{padding:.75rem;background:#fde8e8;border:1px solid #c81e1e;border-radius:4px}
.hint{color:#4b5563;font-size:.9rem}code{word-break:break-all}nav{margin-top:1.5rem;font-size:.9rem}nav a{margin-right:1rem}`;

/** The pages run no script and load nothing: the CSP allows only this stylesheet (by hash). */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function page(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${new Html(STYLE)}</style>
</head>
<body>
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.value;
}

export const hidden = (fields: Record<string, string>) =>
  Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">\n`);

export const errorBox = (message?: string) => (message ? html`<p class="error" role="alert" id="form-error">${message}</p>` : '');
