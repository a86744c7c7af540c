package safefile

import (
	"context"
	"io"
)

// ContextReader returns a reader of r that fails with ctx's cause once ctx
// is done, checked before every read: a loop reading a long file stops
// within one buffer of an interrupt (SIGINT, SIGTERM) instead of reading to
// the end. A nil ctx never ends.
func ContextReader(ctx context.Context, r io.Reader) io.Reader {
	if ctx == nil {
		return r
	}
	return &ctxIO{ctx: ctx, r: r}
}

// ctxIO is ContextReader's reader and ContextWriter's writer.
type ctxIO struct {
	ctx context.Context
	r   io.Reader
	w   io.Writer
}

func (c *ctxIO) Read(b []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(b)
}

// ContextWriter is ContextReader for a writer: a long streamed write (a
// merged.json) fails once ctx is done, so that WriteFunc leaves the old file
// in place rather than finish or cut it.
func ContextWriter(ctx context.Context, w io.Writer) io.Writer {
	if ctx == nil {
		return w
	}
	return &ctxIO{ctx: ctx, w: w}
}

func (c *ctxIO) Write(b []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.w.Write(b)
}
