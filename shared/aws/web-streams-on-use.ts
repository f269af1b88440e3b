/**
 * Stands in for `node:stream/web` in the bundles (`infra/bundling.ts` aliases it here). `@middy/core`
 * imports `ReadableStream` from it at load, for response streaming, which no function here uses;
 * loading it costs every cold start eight built-in modules (Node's web streams with their encoding
 * and compression streams). This `ReadableStream` is the real one, looked up on first use through
 * Node's own lazy global: `instanceof`, `new`, a call without `new` (a TypeError), subclassing and
 * its statics all behave as the real class's. Only reflection on its own properties
 * (`Object.getOwnPropertyDescriptor`, `Object.keys`) sees the stand-in's placeholder function.
 */
const real = (): typeof globalThis.ReadableStream => globalThis.ReadableStream;

// The target is a plain function: a class's own `prototype` is read-only, and a proxy must then
// answer it as is, never the real class's.
export const ReadableStream: typeof globalThis.ReadableStream = new Proxy(
  function ReadableStream() {} as unknown as typeof globalThis.ReadableStream,
  {
    get: (_target, key) => Reflect.get(real(), key),
    set: (_target, key, value) => Reflect.set(real(), key, value),
    has: (_target, key) => Reflect.has(real(), key),
    apply: (_target, self, args) => Reflect.apply(real(), self, args),
    construct: (_target, args, newTarget) => Reflect.construct(real(), args, newTarget),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  },
);
