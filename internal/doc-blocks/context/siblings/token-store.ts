// The app's own token store module a page imports (`import { tokenStore } from './token-store'`).
import type { TokenStore } from '@scheduling-kit/core'

export declare const tokenStore: TokenStore
