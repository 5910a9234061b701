// Modules a doc block may import that this workspace does not install: typed as `any`, so the
// block's own use of scheduling-kit is still checked. Each is named where a page imports it.
declare module '@nestjs/core'
declare module '@nestjs/common'
declare module '@nestjs/platform-express'
declare module '@nestjs/platform-fastify'
declare module 'pino'
declare module 'next/server'
declare module '@/lib/scheduling'
