package voiceagent

import "context"

// Page is one page of a list.
type Page[T any] struct {
	Data       []T     `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

// Iter walks every item of a list, fetching the next page as the loop reaches it:
//
//	it := client.Calls.List(ctx, nil)
//	for it.Next() {
//		call := it.Current()
//	}
//	if err := it.Err(); err != nil { … }
type Iter[T any] struct {
	ctx   context.Context
	fetch func(ctx context.Context, cursor string) (*Page[T], error)
	page  *Page[T]
	index int
	err   error
	pages int
}

func paginate[T any](ctx context.Context, c *core, r *request, opts []RequestOption) *Iter[T] {
	return &Iter[T]{ctx: ctx, index: -1, fetch: func(ctx context.Context, cursor string) (*Page[T], error) {
		page := *r
		if cursor != "" {
			page.query = withCursor{query: r.query, cursor: cursor}
		}
		return call[Page[T]](ctx, c, &page, opts)
	}}
}

// withCursor is a list's query with the cursor of the next page.
type withCursor struct {
	query  any
	cursor string
}

// Next moves to the next item, fetching a page when needed; false at the end or on an error.
func (it *Iter[T]) Next() bool {
	if it.err != nil {
		return false
	}
	for it.page == nil || it.index+1 >= len(it.page.Data) {
		cursor := ""
		if it.page != nil {
			if !it.page.HasMore || it.page.NextCursor == nil || *it.page.NextCursor == "" {
				return false
			}
			cursor = *it.page.NextCursor
		}
		page, err := it.fetch(it.ctx, cursor)
		if err != nil {
			it.err = err
			return false
		}
		it.page, it.index = page, -1
		it.pages++
	}
	it.index++
	return true
}

// Current is the item Next moved to.
func (it *Iter[T]) Current() T { return it.page.Data[it.index] }

// Err is the error that stopped the loop, if any.
func (it *Iter[T]) Err() error { return it.err }

// Page is the page of the current item (nil before the first Next).
func (it *Iter[T]) Page() *Page[T] { return it.page }

// Pages is how many pages were fetched so far.
func (it *Iter[T]) Pages() int { return it.pages }

// All reads every remaining item.
func (it *Iter[T]) All() ([]T, error) {
	var items []T
	for it.Next() {
		items = append(items, it.Current())
	}
	return items, it.Err()
}
