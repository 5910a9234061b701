declare module 'express4'
