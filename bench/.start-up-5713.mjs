await import("fastify")
await import("@scheduling-kit/fastify")
