/** Where the session's token lives: the caller's choice (README, Browser quickstart). */

export type KeyValueStore = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/**
 * `sessionStorage` (default): this tab only, gone when it closes. `localStorage`: every tab of the
 * origin, kept across restarts, readable by any script on the origin. `memory`: this page only, lost
 * on reload. Or any object with getItem/setItem/removeItem.
 */
export type StorageChoice = 'sessionStorage' | 'localStorage' | 'memory' | KeyValueStore;

export function memoryStore(): KeyValueStore {
  const items = new Map<string, string>();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, String(value)),
    removeItem: (key) => void items.delete(key),
  };
}

export function resolveStore(choice: StorageChoice): KeyValueStore {
  if (choice === 'sessionStorage') return window.sessionStorage;
  if (choice === 'localStorage') return window.localStorage;
  if (choice === 'memory') return memoryStore();
  if (choice && typeof choice.getItem === 'function' && typeof choice.setItem === 'function' && typeof choice.removeItem === 'function') {
    return choice;
  }
  throw new TypeError('storage must be "sessionStorage", "localStorage", "memory" or an object with getItem, setItem and removeItem');
}
