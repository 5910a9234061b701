export { VirtualClock } from './clock.js'
export { drawOf, seeded } from './random.js'
export { runSimulation, type SimulationOptions, type SimulationReport } from './run.js'
export { type ModelWebhook, ServiceModel, type ServiceModelOptions } from './service.js'
