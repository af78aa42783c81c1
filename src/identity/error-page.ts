const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * The login host's answer when it cannot trust where to send the browser back (unknown app,
 * unregistered redirect_uri): a page, never a redirect (RFC 6749 §4.1.2.1).
 */
export function errorPage(title: string, message: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p role="alert">${escapeHtml(message)}</p>
<p>Return to the app you came from and try again; if this keeps happening, tell its developers.</p>
</main>
</body>
</html>
`;
}
