// A Lua script of this folder, imported as its text: the build inlines it (tsup's `text`
// loader), and the tests read it through vitest.config.ts's `lua` plugin.
declare module '*.lua' {
  const source: string
  export default source
}
