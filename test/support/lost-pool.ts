/**
 * A stand-in for a pg Pool whose database is gone: each connection it hands out answers every
 * query with `lost`, as a connection to a Postgres that went away does. `onQuery` counts them.
 */
export function lostPool(lost: Error, onQuery: () => void = () => undefined) {
  return {
    query: () => {
      onQuery();
      return Promise.reject(lost);
    },
    connect: async () => ({
      query: () => {
        onQuery();
        return Promise.reject(lost);
      },
      on: () => undefined,
      removeListener: () => undefined,
      release: () => undefined,
    }),
  };
}
