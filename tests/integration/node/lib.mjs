// Shared by the client scenario scripts: argument parsing, bounded waits, the JSON result line.
//
// Every script is run as `node <client>.mjs <scenario> [bootstrap]` (bootstrap also from
// $KAFKA_BOOTSTRAP, default 127.0.0.1:9092). It prints exactly one line starting with
// "RESULT " followed by JSON on stdout, and exits 0 only if the scenario's own checks passed.
// The pytest side (tests/integration/test_node_clients.py) parses that line and asserts on it.

export function parseArgs(argv = process.argv) {
  const scenario = argv[2]
  const bootstrap = argv[3] || process.env.KAFKA_BOOTSTRAP || '127.0.0.1:9092'
  if (!scenario) {
    console.error('usage: node <client>.mjs <scenario> [bootstrap]')
    process.exit(2)
  }
  return { scenario, bootstrap }
}

export const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

// Poll `predicate` until it returns a truthy value or `ms` elapses; throws with `what` on timeout.
export async function waitFor(what, predicate, ms = 15000, step = 50) {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await predicate()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(step)
  }
}

// Rejects if `promise` has not settled within `ms` (so a hung close() cannot hang the script).
export function within(what, promise, ms = 10000) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

// {memberId: [partitions]} -> true when the partitions are disjoint and cover 0..n-1.
export function isPartition(assignments, n) {
  const all = Object.values(assignments).flat()
  return all.length === n && new Set(all).size === n && all.every(p => p >= 0 && p < n)
}

export function message(i, prefix) {
  return { key: `key-${i % 50}`, value: `${prefix}-${i}`, headers: { seq: String(i), origin: prefix } }
}

// Checks what was consumed against what was produced: every message once, per partition in
// offset order, per key in production order, keys/values/headers intact.
export function verify(produced, consumed) {
  const problems = []
  const byValue = new Map(produced.map(m => [m.value, m]))
  const seen = new Set()
  const lastOffset = new Map()
  const lastSeqByKey = new Map()
  for (const c of consumed) {
    const p = byValue.get(c.value)
    if (!p) { problems.push(`unexpected value ${c.value}`); continue }
    if (seen.has(c.value)) problems.push(`duplicate ${c.value}`)
    seen.add(c.value)
    if (c.key !== p.key) problems.push(`key of ${c.value}: ${c.key} != ${p.key}`)
    if (JSON.stringify(c.headers) !== JSON.stringify(p.headers)) {
      problems.push(`headers of ${c.value}: ${JSON.stringify(c.headers)}`)
    }
    const prev = lastOffset.get(c.partition)
    if (prev !== undefined && !(c.offset > prev)) problems.push(`partition ${c.partition} offset ${c.offset} after ${prev}`)
    lastOffset.set(c.partition, c.offset)
    const seq = Number(p.headers.seq)
    const prevSeq = lastSeqByKey.get(c.key)
    if (prevSeq !== undefined && !(seq > prevSeq)) problems.push(`key ${c.key}: seq ${seq} after ${prevSeq}`)
    lastSeqByKey.set(c.key, seq)
  }
  return {
    produced: produced.length,
    consumed: consumed.length,
    distinct: seen.size,
    partitions: [...lastOffset.keys()].sort((a, b) => a - b),
    problems: problems.slice(0, 20)
  }
}

export async function main(scenarios) {
  const { scenario, bootstrap } = parseArgs()
  const run = scenarios[scenario]
  if (!run) {
    console.error(`unknown scenario ${scenario}; known: ${Object.keys(scenarios).join(', ')}`)
    process.exit(2)
  }
  const watchdog = setTimeout(() => {
    console.log('RESULT ' + JSON.stringify({ ok: false, scenario, error: 'watchdog: scenario took over 60 s' }))
    process.exit(1)
  }, 60000)
  let result
  try {
    result = { ok: true, scenario, ...(await run(bootstrap)) }
  } catch (error) {
    result = { ok: false, scenario, error: String(error && error.stack || error) }
  }
  clearTimeout(watchdog)
  console.log('RESULT ' + JSON.stringify(result))
  // Clients may leave sockets or timers behind after a failure; do not wait for them.
  process.exit(result.ok ? 0 : 1)
}

// The control endpoint (base URL in $KAFKA_EMU_CONTROL, http://HOST:PORT, its token in
// $KAFKA_EMU_CONTROL_TOKEN), with plain `fetch`.
// One request: {status, type, body} (the body is always JSON, errors included).
export async function controlRequest(method, path, body) {
  const base = process.env.KAFKA_EMU_CONTROL
  if (!base) throw new Error('set KAFKA_EMU_CONTROL to the control endpoint, http://HOST:PORT')
  const init = { method, headers: { authorization: `Bearer ${process.env.KAFKA_EMU_CONTROL_TOKEN}` } }
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json'
    init.body = typeof body === 'string' ? body : JSON.stringify(body)
  }
  const res = await fetch(base + path, init)
  return { status: res.status, type: res.headers.get('content-type'), body: await res.json() }
}

// The result of a control request that must succeed.
export async function controlOk(method, path, body) {
  const { status, body: answer } = await controlRequest(method, path, body)
  if (status !== 200) throw new Error(`${method} ${path}: ${status} ${JSON.stringify(answer)}`)
  return answer.result
}
