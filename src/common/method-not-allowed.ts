import type { NextFunction, Request, Response } from 'express';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface DocumentedPath {
  pattern: RegExp;
  templated: boolean;
  allow: string[];
}

/**
 * Answers 405 with `Allow` for a method the OpenAPI document does not declare on a documented
 * path, before routing: Express would hand `GET /api/workflows/start` to `/api/workflows/{id}`
 * and answer anything else with 404. As OpenAPI says, a concrete path wins over a templated one.
 */
export function methodNotAllowed(document: { paths: Record<string, Record<string, unknown>> }) {
  const paths: DocumentedPath[] = Object.entries(document.paths).map(([template, operations]) => {
    const declared = Object.keys(operations).filter((m) => HTTP_METHODS.includes(m)).map((m) => m.toUpperCase());
    if (declared.includes('GET') && !declared.includes('HEAD')) declared.push('HEAD');
    const segments = template.split('/').map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    return { pattern: new RegExp(`^${segments.join('/')}/?$`), templated: template.includes('{'), allow: declared.sort() };
  });
  paths.sort((a, b) => Number(a.templated) - Number(b.templated));

  return (req: Request, res: Response, next: NextFunction): void => {
    const documented = paths.find((p) => p.pattern.test(req.path));
    if (!documented || documented.allow.includes(req.method)) return next();
    res.setHeader('Allow', documented.allow.join(', '));
    res.status(405).json({
      error: { code: 'method_not_allowed', message: `${req.method} is not allowed here; allowed: ${documented.allow.join(', ')}`, details: null },
    });
  };
}
