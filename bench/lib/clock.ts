/** Epoch milliseconds with sub-millisecond resolution, comparable across worker threads (unlike performance.now()). */
export const clock = () => performance.timeOrigin + performance.now();
