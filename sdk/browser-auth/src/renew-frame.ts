import { RenewTimeoutError } from './errors.js';

/** The name the hidden frame carries, so the page loaded in it knows to hand its callback over. */
export const RENEW_FRAME_NAME = 'wfe-auth-renew';
const MESSAGE_TYPE = 'wfe-auth:renew-callback';

export function inRenewFrame(): boolean {
  return window.parent !== window && window.name === RENEW_FRAME_NAME;
}

/**
 * In the frame: give the callback's query to the parent. The target origin is the frame's own, so
 * a parent on any other origin never receives the code.
 */
export function handOffToParent(): void {
  window.parent.postMessage({ type: MESSAGE_TYPE, search: window.location.search }, window.location.origin);
}

/**
 * In the parent: load `url` in a hidden frame and resolve with the callback query it hands back.
 * Only a message from that very frame, sent from the redirect URI's origin, is taken.
 */
export function runRenewFrame(url: string, callbackOrigin: string, timeoutMs: number): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    const frame = document.createElement('iframe');
    frame.name = RENEW_FRAME_NAME;
    frame.title = 'session renewal';
    frame.setAttribute('aria-hidden', 'true');
    frame.tabIndex = -1;
    frame.style.cssText = 'position:absolute;width:0;height:0;border:0;visibility:hidden';

    const finish = () => {
      clearTimeout(timer);
      window.removeEventListener('message', onMessage);
      frame.remove();
    };
    const onMessage = (event: MessageEvent) => {
      if (event.origin !== callbackOrigin || event.source !== frame.contentWindow) return;
      const data = event.data as { type?: unknown; search?: unknown } | null;
      if (!data || data.type !== MESSAGE_TYPE || typeof data.search !== 'string') return;
      finish();
      resolve(new URLSearchParams(data.search));
    };
    const timer = setTimeout(() => {
      finish();
      reject(new RenewTimeoutError(`the login host did not answer the silent renewal within ${timeoutMs} ms`));
    }, timeoutMs);

    window.addEventListener('message', onMessage);
    frame.src = url;
    document.body.appendChild(frame);
  });
}
