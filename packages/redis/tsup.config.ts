import { defineConfig } from 'tsup'
import { library } from '../../tsup.shared.js'

export default defineConfig({
  ...library,
  // The Lua scripts of src/lua/, inlined as text: the package reads no file at run time.
  loader: { '.lua': 'text' },
})
