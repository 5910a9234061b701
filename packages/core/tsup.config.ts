import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts', 'src/index.node.ts'],
  format: ['esm', 'cjs'],
  dts: { entry: 'src/index.ts' },
  clean: true,
  target: 'es2022',
  platform: 'neutral',
  external: ['node:crypto'],
  sourcemap: true,
})
