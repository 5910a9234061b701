import { defineConfig } from 'tsup'
import { library } from '../../tsup.shared.js'

export default defineConfig(library)
