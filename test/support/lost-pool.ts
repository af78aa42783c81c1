/**
 * A stand-in for a pg Pool whose database is gone: it and each connection it hands out answer
 * every query with `lost`, as a connection to a Postgres that went away does. `onQuery` counts them.
 */
export function lostPool(lost: Error, onQuery: () => void = () => undefined) {
  const query = () => {
    onQuery();
    return Promise.reject(lost);
  };
  return {
    query,
    connect: async () => ({ query, on: () => undefined, removeListener: () => undefined, release: () => undefined }),
  };
}
