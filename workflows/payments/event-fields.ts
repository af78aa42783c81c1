import { z } from 'zod';

/**
 * The longest text a normalised event field may carry. The grant takes the receive run's fields as
 * its input with this bound, so receive refuses (PAYLOAD_INVALID) what the grant would refuse:
 * otherwise the ingress would accept, and claim, an event whose chain can never complete.
 */
export const EVENT_TEXT_MAX = 255;

export const eventText = z.string().max(EVENT_TEXT_MAX);

/**
 * The longest signature header the ingress and the receive run accept: the run's input bound, so
 * an accepted delivery always starts. The provider's headers hold a timestamp and a few v1 values.
 */
export const SIGNATURE_MAX = 8192;
