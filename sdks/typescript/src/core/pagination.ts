// Lists follow `next_cursor`. A list method returns a PageIterator: `await` it for the first
// page, or `for await` over it for every item of every page, fetched as the loop goes.

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export class PageIterator<T, P extends Page<T> = Page<T>> implements AsyncIterable<T>, PromiseLike<P> {
  private first: Promise<P> | undefined;

  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<P>) {}

  // biome-ignore lint/suspicious/noThenProperty: awaiting a list gives its first page, as in the OpenAI SDK
  then<A = P, B = never>(onFulfilled?: ((page: P) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    this.first ??= this.fetchPage(undefined);
    return this.first.then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<P | B> {
    return this.then(undefined, onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<P> {
    return this.then().finally(onFinally);
  }

  /** Every page, in order. */
  async *pages(): AsyncGenerator<P> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (!page.has_more || !page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item of every page, collected (mind the size of what you list). */
  async toArray(): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}
