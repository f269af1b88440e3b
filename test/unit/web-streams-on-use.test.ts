import { ReadableStream as Real } from 'node:stream/web';
import { describe, expect, it } from 'vitest';
import { ReadableStream } from '#shared/aws/web-streams-on-use.ts';

describe("the bundles' node:stream/web stand-in (shared/aws/web-streams-on-use.ts)", () => {
  it('answers instanceof as the real ReadableStream does (the one use @middy/core makes of it)', () => {
    expect(new Real() instanceof ReadableStream).toBe(true);
    expect(Real.from(['a']) instanceof ReadableStream).toBe(true);
    expect({} instanceof ReadableStream).toBe(false);
    expect(('body' as unknown) instanceof ReadableStream).toBe(false);
    expect(Buffer.from('body') instanceof ReadableStream).toBe(false);
  });

  it('constructs real streams and reaches the real statics', async () => {
    const made = new ReadableStream({
      start(controller) {
        controller.enqueue('a');
        controller.close();
      },
    });
    expect(made).toBeInstanceOf(Real);
    const chunks: string[] = [];
    for await (const chunk of ReadableStream.from(['x', 'y'])) chunks.push(chunk);
    expect(chunks).toEqual(['x', 'y']);
    expect(ReadableStream.prototype).toBe(Real.prototype);
    expect(ReadableStream.name).toBe('ReadableStream');
    class Counted extends ReadableStream<string> {}
    expect(new Counted()).toBeInstanceOf(Real);
  });

  it('refuses a call without new, as the real class does', () => {
    const call = ReadableStream as unknown as () => unknown;
    expect(() => call()).toThrow(TypeError);
  });
});
