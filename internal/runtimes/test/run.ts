import { spawn } from 'node:child_process'

/** What a runtime's run printed: its one JSON line, parsed. */
export interface Run<T> {
  result: T
  stderr: string
}

/**
 * Runs a command to its end (or `timeoutMs`, then kills it and whatever it started: Miniflare's
 * workerd, say) and parses the last line of its output as JSON. Anything else (a crash, no
 * JSON, a time-out) throws with the output in it.
 */
export function runJson<T>(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Run<T>> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // a process group of its own, to kill as one
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
    const timeoutMs = options.timeoutMs ?? 180_000
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        child.kill('SIGKILL')
      }
    }, timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const last = stdout.trim().split('\n').at(-1) ?? ''
      const said = `\n--- stdout\n${stdout.slice(-4000)}\n--- stderr\n${stderr.slice(-4000)}`
      if (code !== 0) {
        const why =
          signal === 'SIGKILL'
            ? `was killed after ${timeoutMs} ms`
            : `exited with ${code ?? signal}`
        return reject(new Error(`${command} ${why}${said}`))
      }
      try {
        resolve({ result: JSON.parse(last) as T, stderr })
      } catch {
        reject(new Error(`${command} printed no JSON result${said}`))
      }
    })
  })
}
