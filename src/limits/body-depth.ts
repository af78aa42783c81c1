import type { NextFunction, Request, Response } from 'express';
import { findTooDeep } from '../../workflows/runtime/json-walk';
import { renderPath } from '../../workflows/runtime/storable-text';
import { validationFailed } from '../common/api-error';

/**
 * Refuses a JSON body nested deeper than `maxDepth` objects and arrays with a 422 (rule
 * `max_depth`) naming the top-level field that holds it, right after the body is parsed
 * (JSON.parse itself is iterative) and before anything walks it: what reads a body later
 * (validation, the request hash, JSON.stringify) may recurse, and is bounded by this.
 */
export function bodyDepthLimit(maxDepth: number) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const tooDeep = findTooDeep(req.body, maxDepth);
    if (!tooDeep) return next();
    const message = `nests more than ${maxDepth} objects or arrays deep; the limit is ${maxDepth}`;
    const error = validationFailed([{ field: renderPath(tooDeep.slice(0, 1)), rule: 'max_depth', message }]);
    res.status(error.status).json({ error: { code: error.code, message: error.message, details: error.details } });
  };
}
