import { z } from 'zod';

/**
 * Visible ASCII, what a bearer token is made of. A token goes into an HTTP header, which fetch
 * refuses to build with a line break (a line break would also inject a header) or a character
 * above U+00FF: such a token could never be sent, so it is refused where it is given rather than
 * failing every run that uses it.
 */
export const VISIBLE_ASCII = /^[\x21-\x7e]*$/;

export const VISIBLE_ASCII_MESSAGE = 'must be visible ASCII (no space, line break or character above U+007E): it is sent in an HTTP header';

/** An API token sent as `Authorization: Bearer <token>`. */
export const bearerToken = () => z.string().min(1).regex(VISIBLE_ASCII, { error: VISIBLE_ASCII_MESSAGE });
