import { z } from 'zod';
import { passwordSchema } from './passwords';

/** Lower-cased on the way in: one account per address per app, however it is typed. */
export const emailSchema = z.string().trim().max(254).toLowerCase().pipe(z.email());
const clientKey = z.string().min(1).max(200);
const token = z.string().min(1).max(100);

export const registerBody = z.strictObject({ client_key: clientKey, email: emailSchema, password: passwordSchema });
export const verifyEmailBody = z.strictObject({ token });
export const passwordResetBody = z.strictObject({ client_key: clientKey, email: emailSchema });
export const passwordResetCompleteBody = z.strictObject({ token, password: passwordSchema });
/** The account's current password: the bounds every password has, so a longer string is refused unhashed. */
export const totpStartBody = z.strictObject({ password: passwordSchema });
const totpCode = z.string().regex(/^\d{6}$/, 'must be 6 digits');
export const totpConfirmBody = z.strictObject({ code: totpCode });
/** The current code, required while TOTP is on; an unconfirmed enrolment is removed without one. */
export const totpRemoveBody = z.strictObject({ code: totpCode.optional() });

export const registered = z.object({ end_user_uuid: z.string(), email_verification: z.literal('sent') });
export const emailVerified = z.object({ end_user_uuid: z.string(), email_verified: z.literal(true) });
export const resetAccepted = z.object({ password_reset: z.literal('requested') });
export const resetCompleted = z.object({ password_reset: z.literal('completed') });
export const totpEnrolment = z.object({ secret: z.string(), otpauth_uri: z.string() });
export const totpEnabled = z.object({ totp: z.literal('enabled') });

export type RegisterBody = z.infer<typeof registerBody>;
export type VerifyEmailBody = z.infer<typeof verifyEmailBody>;
export type PasswordResetBody = z.infer<typeof passwordResetBody>;
export type PasswordResetCompleteBody = z.infer<typeof passwordResetCompleteBody>;
export type TotpStartBody = z.infer<typeof totpStartBody>;
export type TotpConfirmBody = z.infer<typeof totpConfirmBody>;
export type TotpRemoveBody = z.infer<typeof totpRemoveBody>;
