/** A page of a cursor-paged list that is also an async iterator over its items and every later page's. */
export type Walkable<Page, Item> = Page & AsyncIterable<Item>;

/** Makes `first` walkable: iterating yields `items` of it, then fetches each later page with `next(cursor)`. */
export function walkable<Page extends { next_cursor: string | null }, Item>(
  first: Page,
  items: (page: Page) => Item[],
  next: (cursor: string) => Promise<Page>,
): Walkable<Page, Item> {
  async function* walk(): AsyncGenerator<Item> {
    let current = first;
    for (;;) {
      yield* items(current);
      if (!current.next_cursor) return;
      current = await next(current.next_cursor);
    }
  }
  return { ...first, [Symbol.asyncIterator]: walk };
}
